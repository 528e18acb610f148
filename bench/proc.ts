/**
 * What the benchmarks read from Linux's /proc: a process's CPU time and resident memory, the whole
 * machine's busy time, and the CPU time of PostgreSQL's processes split by what they serve. Every
 * reader answers undefined (or nothing) where /proc is missing or the process is gone, so a
 * benchmark still runs elsewhere, only without these figures.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Clock ticks per second of /proc's CPU counters (USER_HZ; 100 on every common Linux). */
const TICKS_PER_S = (() => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** User + system CPU seconds a process has used so far (its own, not its children's). */
export function processCpuSeconds(pid: number): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of the line (utime, stime) are 11 and 12 after the ')'; fields[0] is field 3.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / TICKS_PER_S : undefined;
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(read(`/proc/${pid}/status`) ?? '')?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}

/** Resident set size right now, in bytes. */
export const rssBytes = (pid: number) => statusKb(pid, 'VmRSS');
/** The highest resident set size so far (the kernel's high-water mark), in bytes. */
export const peakRssBytes = (pid: number) => statusKb(pid, 'VmHWM');

/** The whole machine's CPU time so far, in seconds summed over all cores: busy and in total. */
export function machineCpu(): { busyS: number; totalS: number } | undefined {
  const line = read('/proc/stat')?.split('\n', 1)[0];
  if (!line?.startsWith('cpu ')) return undefined;
  // user nice system idle iowait irq softirq steal (guest time is already inside user). Steal is
  // time the hypervisor gave to someone else: neither busy here nor idle.
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1, 9).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq!;
  return { busyS: busy / TICKS_PER_S, totalS: (busy + idle! + iowait! + steal!) / TICKS_PER_S };
}

/** The CPU seconds of the machine's PostgreSQL processes used between start() and the last sample. */
export interface PostgresCpu {
  /** Backends connected to the bench database (and autovacuum workers on it). */
  databaseS: number;
  /** The server's own processes: WAL writer, checkpointer, background writer, postmaster… */
  backgroundS: number;
  /** Backends of other databases: someone else's work on the same PostgreSQL, not the benchmark's. */
  otherS: number;
}

/**
 * Samples every process named `postgres` (the local server's; a remote one is not seen and reads as
 * 0) and attributes its CPU time by its title, which for a backend names its database
 * (`postgres: 15/main: user dbname 127.0.0.1(5432) idle`). A process's time counts from when it was
 * first seen (its time before start() is subtracted); one that exits between samples loses at most
 * the last interval, so sample often (every second is plenty).
 */
export class PostgresCpuMonitor {
  #first = new Map<number, number>();
  #last = new Map<number, { cpuS: number; kind: keyof PostgresCpu }>();

  constructor(private readonly database: string) {}

  /** Takes the baseline: what each existing process has used so far does not count. */
  start(): void {
    this.#first.clear();
    this.#last.clear();
    this.#sample(true);
  }

  sample(): void {
    this.#sample(false);
  }

  #sample(baseline: boolean): void {
    let entries: string[];
    try {
      entries = fs.readdirSync('/proc');
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      if (read(`/proc/${pid}/comm`)?.trim() !== 'postgres') continue;
      const cpuS = processCpuSeconds(pid);
      if (cpuS === undefined) continue;
      const known = this.#last.get(pid);
      if (known === undefined) {
        // Seen at the baseline: count from here; appeared later: a new process, counted from 0.
        this.#first.set(pid, baseline ? cpuS : 0);
        const title = (read(`/proc/${pid}/cmdline`) ?? '').replaceAll('\0', ' ');
        this.#last.set(pid, { cpuS, kind: this.#classify(title) });
      } else {
        known.cpuS = cpuS;
      }
    }
  }

  /** How many PostgreSQL processes have been seen (0: none on this machine, or no /proc). */
  get processes(): number {
    return this.#last.size;
  }

  /** The seconds used since start(), as of the last sample. */
  result(): PostgresCpu {
    const sums: PostgresCpu = { databaseS: 0, backgroundS: 0, otherS: 0 };
    for (const [pid, { cpuS, kind }] of this.#last) sums[kind] += cpuS - (this.#first.get(pid) ?? 0);
    return sums;
  }

  #classify(title: string): keyof PostgresCpu {
    // "postgres: <cluster>: <user> <database> <host>(<port>) <activity>" for a client backend.
    if (title.split(' ').includes(this.database)) return 'databaseS';
    return /^postgres: (\S+: )?\S+ \S+ (\S+\(\d+\)|\[local\])/.test(title) ? 'otherS' : 'backgroundS';
  }
}
