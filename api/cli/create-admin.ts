import { configOrExit } from '../../platform/config';
import { closeDatabase } from '../../platform/database';
import { AppError } from '../../platform/errors';
import { openRepositories } from '../../repositories/transaction';
import { ensureAdmin } from '../../services/auth-service';

const USAGE =
  'usage: npm run admin:create -- <email>                create an admin (who also holds compliance); the password\n' +
  '                                                      is typed at a prompt, or read from stdin when piped\n' +
  '       npm run admin:create -- --promote <email>      make an existing account an admin\n';

const PASSWORD_ON_ARGV =
  'admin:create takes no password on the command line: it would show in `ps` and the shell history.\n' +
  'Run `npm run admin:create -- <email>` and type it at the prompt, or pipe it on stdin\n' +
  '(e.g. `npm run admin:create -- <email> < password-file`).\n';

/** The password typed at the terminal, without echo; Ctrl-C aborts. */
function promptHidden(question: string): Promise<string> {
  const { stdin, stderr } = process;
  return new Promise((resolve, reject) => {
    let typed = '';
    stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (result: () => void) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      stderr.write('\n');
      result();
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(() => resolve(typed));
        if (ch === '\u0003' || ch === '\u0004') return done(() => reject(new Error('aborted')));
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The first line of stdin (a pipe or a file), without its line ending. */
async function firstLineOfStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

/** At a terminal: asked twice, without echo, and both must match. Piped: the first line of stdin. */
async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) return firstLineOfStdin();
  const password = await promptHidden('Password for the new admin: ');
  if ((await promptHidden('Repeat it: ')) !== password) throw new Error('the two passwords differ; nothing was created');
  return password;
}

/**
 * `npm run admin:create`: create an admin when no account has the e-mail. An existing account that is not
 * an admin is promoted only with `--promote` (anyone can register any e-mail: check who owns it first); it
 * keeps its own password. An existing admin is left unchanged. The password is never an argument
 * (docs/access.md#admins): it is typed at a prompt, or piped on stdin.
 */
async function main(): Promise<void> {
  configOrExit();
  const args = process.argv.slice(2);
  const promote = args.includes('--promote');
  const positional = args.filter((a) => a !== '--promote');
  const [email] = positional;
  if (!email || positional.some((a) => a.startsWith('--'))) {
    process.stderr.write(USAGE);
    process.exit(64);
  }
  if (positional.length > 1) {
    process.stderr.write(promote ? USAGE : PASSWORD_ON_ARGV);
    process.exit(64);
  }
  const password = promote ? undefined : await readPassword();
  if (password === '') {
    process.stderr.write('no password given: type it at the prompt, or pipe it on stdin\n');
    process.exit(64);
  }
  openRepositories();
  try {
    const { user, outcome } = await ensureAdmin(email, password, { promote });
    const who = `${user.email} (${user.user_id})`;
    const done = {
      created: `created admin ${who}`,
      promoted: `promoted ${who} to admin; its password is unchanged`,
      present: `${who} is already an admin; left unchanged`,
    }[outcome];
    process.stdout.write(`${done}\n`);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'conflict') throw err;
    process.stderr.write(
      `${email.trim().toLowerCase()} belongs to an existing account that is not an admin; it was not promoted. ` +
        'Anyone can register any e-mail: check who owns that account, then run ' +
        `\`npm run admin:create -- --promote ${email.trim().toLowerCase()}\` to make it an admin.\n`,
    );
    process.exitCode = 1;
  } finally {
    await closeDatabase();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
