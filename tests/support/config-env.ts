import { reloadConfig } from '../../platform/config';

/** Set environment variables and reload the configuration; the returned function puts both back. */
export function withEnv(values: Record<string, string>): () => void {
  const previous = Object.fromEntries(Object.keys(values).map((k) => [k, process.env[k]]));
  Object.assign(process.env, values);
  reloadConfig();
  return () => {
    for (const [k, v] of Object.entries(previous)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    reloadConfig();
  };
}
