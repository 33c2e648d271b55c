import { configOrExit } from '../../platform/config';
import { closeDatabase } from '../../platform/database';
import { models } from '../../models';
import { ensureAdmin } from '../services/auth-service';

/** `npm run admin:create -- <email> <password>`: create (or promote) an admin, who also holds `compliance`. */
async function main(): Promise<void> {
  configOrExit();
  const [email, password] = process.argv.slice(2);
  if (!email || !password) {
    process.stderr.write('usage: npm run admin:create -- <email> <password>\n');
    process.exit(64);
  }
  models();
  const { user, created } = await ensureAdmin(email, password);
  process.stdout.write(`${created ? 'created' : 'promoted'} admin ${user.email} (${user.user_id})\n`);
  await closeDatabase();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
