import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { ROOT } from './local-tools';

/** Where the browser tests leave their screenshots (git-ignored). */
export const ARTIFACTS = path.join(ROOT, 'tests', 'artifacts');

/** Chromium for the browser tests: CHROMIUM_PATH, else the path `npm run setup` recorded, else Debian's. */
export function chromiumPath(): string {
  let candidate = process.env.CHROMIUM_PATH;
  if (!candidate) {
    const recorded = path.join(ROOT, '.tools', 'chromium-path');
    candidate = existsSync(recorded) ? readFileSync(recorded, 'utf8').trim() : '/usr/bin/chromium';
  }
  if (!existsSync(candidate)) {
    throw new Error(
      `Chromium not found at ${candidate}: the browser tests need it. Run \`npm run setup\` (installs Debian's chromium ` +
        'when run as root) or `sudo apt-get install chromium`, or set CHROMIUM_PATH.',
    );
  }
  return candidate;
}

export interface ConsoleBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile, no background network and no sandbox (containers). */
export async function launchBrowser(): Promise<ConsoleBrowser> {
  const executablePath = chromiumPath();
  mkdirSync(ARTIFACTS, { recursive: true });
  const profile = mkdtempSync(path.join(tmpdir(), 'paygate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
