import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/** Where the build leaves the prebuilt workflow bundle that production workers load. */
export const WORKFLOW_BUNDLE_PATH = path.resolve(__dirname, '..', 'workflow-bundle.js');

/** Bundle the workflow code once at build time, so workers start without running webpack. */
async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: undefined });
  fs.writeFileSync(WORKFLOW_BUNDLE_PATH, code);
  process.stdout.write(`workflow bundle written (${(code.length / 1024).toFixed(0)} KiB)\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
