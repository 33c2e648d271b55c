import { configOrExit } from '../../platform/config';
import { closeDatabase } from '../../platform/database';
import { AppError } from '../../platform/errors';
import { openRepositories } from '../../repositories/transaction';
import { ensureAdmin } from '../../services/auth-service';

const USAGE =
  'usage: npm run admin:create -- <email> <password>     create an admin (who also holds compliance)\n' +
  '       npm run admin:create -- --promote <email>      make an existing account an admin\n';

/**
 * `npm run admin:create`: create an admin when no account has the e-mail. An existing account that is not
 * an admin is promoted only with `--promote` (anyone can register any e-mail: check who owns it first); it
 * keeps its own password. An existing admin is left unchanged.
 */
async function main(): Promise<void> {
  configOrExit();
  const args = process.argv.slice(2);
  const promote = args.includes('--promote');
  const positional = args.filter((a) => a !== '--promote');
  const [email, password] = positional;
  if (!email || (!promote && !password) || positional.length > 2 || positional.some((a) => a.startsWith('--'))) {
    process.stderr.write(USAGE);
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
