import { configOrExit } from './config';

/**
 * Imported first by an entry point: the configuration is validated before any other module loads, so a bad
 * setting stops the process with its one-line message (exit 78), not a stack trace from whichever module
 * read the configuration first.
 */
configOrExit();
