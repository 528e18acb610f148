/**
 * What summarising costs per log, in this process, without a database: bench:alerts's logs (as the
 * server stores them) go through the skip index's Summariser in blocks of 4,096 (the block's, its
 * slices' and its gram filters), as the builder does after reading them. Prints µs per log, so a change to the items or the filter
 * can be judged in seconds before bench:needle's ingest run.
 *
 *   npx tsx bench/summarise.ts [--logs 200000] [--repeat 5]
 */
import { parseArgs } from 'node:util';
import { Summariser } from '../src/features/logs/store/blocks/store.js';
import { logsFor } from './alert-rules.js';
import { toRawRow } from './logs.js';

const { values } = parseArgs({ options: { logs: { type: 'string', default: '200000' }, repeat: { type: 'string', default: '5' } } });
const count = Number(values.logs);
const BLOCK = 4096;
const rows = logsFor('query', count, 42, Date.now() - 3_600_000, 3_600_000 / count).map((log, seq) => ({ ...toRawRow(log), seq }));
console.log(`summarise: ${count.toLocaleString('en')} logs in blocks of ${BLOCK}, Node ${process.version}`);
const perLog: number[] = [];
let bytes = 0;
let sliceBytes = 0;
let gramBytes = 0;
for (let r = 0; r < Number(values.repeat); r++) {
  const start = performance.now();
  bytes = 0;
  sliceBytes = 0;
  gramBytes = 0;
  for (let i = 0; i < rows.length; i += BLOCK) {
    const last = Math.min(rows.length, i + BLOCK) - 1;
    const summary = new Summariser(i, last);
    for (let k = i; k <= last; k++) summary.add(rows[k]!);
    const { bloom, slices, grams } = summary.finish();
    if (!bloom || !slices || !grams) throw new Error('a log past the limits');
    gramBytes += grams.bytes.length;
    bytes += bloom.bytes.length;
    for (const slice of [...slices.slices, slices.common]) sliceBytes += slice.bytes.length;
  }
  const us = ((performance.now() - start) * 1000) / count;
  perLog.push(us);
  console.log(`  round ${r + 1}: ${us.toFixed(2)} µs/log, filters ${(bytes / count).toFixed(1)} bytes/log, slices' filters ${(sliceBytes / count).toFixed(1)} bytes/log, gram filters ${(gramBytes / count).toFixed(1)} bytes/log`);
}
perLog.sort((a, b) => a - b);
console.log(`median ${perLog[Math.floor(perLog.length / 2)]!.toFixed(2)} µs/log`);
