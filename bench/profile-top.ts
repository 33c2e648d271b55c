import fs from 'node:fs';
import path from 'node:path';

/**
 * `node dist/bench/profile-top.js <file.cpuprofile> [top]`: the top frames of a V8 CPU profile (as written by
 * `node --cpu-prof`), by self time, and the same time summed by package, each as a share of the busy time
 * (idle excluded). `npm run bench` writes one profile per spawned process when BENCH_CPU_PROF=1 (see
 * bench/PROFILE.md); this prints what bench/PROFILE.md quotes.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code comes from: an npm package, a folder of Paygate, Node itself, or V8's own bookkeeping. */
export function ownerOf(frame: CallFrame): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (frame.url.startsWith('node:')) return 'node';
  const modules = frame.url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = frame.url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const dist = frame.url.indexOf('/dist/');
  if (dist >= 0) return `paygate ${frame.url.slice(dist + '/dist/'.length).split('/')[0]}/`;
  return path.basename(frame.url);
}

const label = (frame: CallFrame): string => {
  const where = frame.url ? `${frame.url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, '')}:${frame.lineNumber + 1}` : '';
  return `${frame.functionName || '(anonymous)'} ${where}`.trim();
};

export interface ProfileSummary {
  busyMs: number;
  frames: { frame: string; selfMs: number; share: number }[];
  owners: { owner: string; selfMs: number; share: number }[];
}

export function summarise(profile: CpuProfile, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const frames = new Map<string, number>();
  const owners = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === '(idle)') continue;
    busyUs += us;
    const key = label(node.callFrame);
    frames.set(key, (frames.get(key) ?? 0) + us);
    const owner = ownerOf(node.callFrame);
    owners.set(owner, (owners.get(owner) ?? 0) + us);
  }
  const rank = <K extends string>(m: Map<string, number>, name: K) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, us]) =>
          ({ [name]: k, selfMs: us / 1000, share: busyUs > 0 ? us / busyUs : 0 }) as { [P in K]: string } & {
            selfMs: number;
            share: number;
          },
      );
  return { busyMs: busyUs / 1000, frames: rank(frames, 'frame'), owners: rank(owners, 'owner') };
}

export function markdown(name: string, s: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  return [
    `#### ${name} — ${(s.busyMs / 1000).toFixed(1)} s busy`,
    '',
    '| self | share | frame |',
    '|---:|---:|---|',
    ...s.frames.map((f) => `| ${f.selfMs.toFixed(0)} ms | ${pct(f.share)} | \`${f.frame.replace(/\|/g, '\\|')}\` |`),
    '',
    '| self | share | package or folder |',
    '|---:|---:|---|',
    ...s.owners.map((o) => `| ${o.selfMs.toFixed(0)} ms | ${pct(o.share)} | ${o.owner} |`),
    '',
  ].join('\n');
}

/**
 * Who calls `frame`: its self time summed by the chain of its `depth` nearest callers, largest first (which socket
 * writes are pg's statements and which an HTTP answer, for example).
 */
export function callersOf(profile: CpuProfile, frame: string, depth = 10): { chain: string; selfMs: number; share: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const chains = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    if (byId.get(id)?.callFrame.functionName !== frame) continue;
    const chain: string[] = [];
    for (let at = parentOf.get(id); at !== undefined && chain.length < depth; at = parentOf.get(at)) {
      const f = byId.get(at)!.callFrame;
      chain.push(`${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`.trim());
    }
    const key = chain.join(' ← ');
    chains.set(key, (chains.get(key) ?? 0) + us);
    total += us;
  }
  return [...chains].sort((a, b) => b[1] - a[1]).map(([chain, us]) => ({ chain, selfMs: us / 1000, share: total > 0 ? us / total : 0 }));
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const callers = args.indexOf('--callers');
  const [file, top] = args.filter((_, i) => callers < 0 || (i !== callers && i !== callers + 1));
  if (!file) {
    console.error('usage: node dist/bench/profile-top.js <file.cpuprofile> [top] [--callers <frame>]');
    process.exit(2);
  }
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  if (callers >= 0) {
    for (const c of callersOf(profile, args[callers + 1] ?? 'writev').slice(0, top ? Number(top) : 10)) {
      console.log(`${c.selfMs.toFixed(0)} ms\t${(c.share * 100).toFixed(1)} %\t${c.chain}`);
    }
  } else {
    console.log(markdown(path.basename(file), summarise(profile, top ? Number(top) : 25)));
  }
}
