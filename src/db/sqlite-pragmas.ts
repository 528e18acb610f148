/**
 * The pragmas every SQLite connection of Loglane uses (the log writer's thread too). WAL with
 * synchronous FULL: a commit survives power loss as well as a crash of the process.
 */
export const SQLITE_PRAGMAS = ['journal_mode = WAL', 'synchronous = FULL', 'foreign_keys = ON', 'busy_timeout = 5000'];
