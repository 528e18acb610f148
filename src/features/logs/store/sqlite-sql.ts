import { sql } from 'kysely';
import { likePattern, type LogSql } from './sql.js';

/** SQLite's statements of the shared log queries. */
export const sqliteSql: LogSql = {
  messageContains: (text) => sql<boolean>`instr(message, ${text}) > 0`,
  holdsIgnoringCase: (column, text) => sql<boolean>`${sql.ref(column)} like ${likePattern(text)} escape '\\'`,
  holds: (column, text) => sql<boolean>`instr(${sql.ref(column)}, ${text}) > 0`,
  summaryReadLogs: 256,
  summaryReadBytes: 512 * 1024,
  pageWindowsMs: [],
  // Without the hint SQLite may walk the time index over the whole range instead.
  seqRangeRead: (compiled) => ({ ...compiled, sql: compiled.sql.replace(/^select (.*?) from "logs" where /, (_all, cols: string) => `select ${cols} from "logs" indexed by "logs_project_seq" where `) }),
  bytesSlice: (bytes, offset, length) => sql`substr(${bytes}, ${offset} + 1, ${length})`,
};
