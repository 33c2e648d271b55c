import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './local-tools';

/** Where setup installs the pinned Python `xmlschema` (scripts/lib.mjs, `ensureXmlschema`). */
export const XMLSCHEMA_DIR = path.join(ROOT, '.tools', 'xmlschema');

const VALIDATE = `
import sys, xmlschema
schema = xmlschema.XMLSchema(sys.argv[1])
errors = [f"{e.path}: {e.reason}" for e in schema.iter_errors(sys.stdin.buffer.read())]
print("\\n".join(errors))
sys.exit(1 if errors else 0)
`;

/**
 * Validate an XML document against an XSD with Python's `xmlschema`: the list of errors (each "path: reason"),
 * empty when it is valid. Throws when the validator itself cannot run (setup installs it).
 */
export function xsdErrors(xml: string, xsdPath: string): string[] {
  const run = spawnSync('python3', ['-c', VALIDATE, xsdPath], {
    input: xml,
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: XMLSCHEMA_DIR },
    timeout: 60_000,
  });
  if (run.error) throw run.error;
  if (run.status !== 0 && run.status !== 1) throw new Error(`xmlschema could not run (run \`npm run setup\`): ${run.stderr}`);
  if (run.status === 1 && run.stdout.trim() === '') throw new Error(`xmlschema failed: ${run.stderr}`);
  return run.stdout.split('\n').filter((line) => line.trim() !== '');
}
