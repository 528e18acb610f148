/**
 * One turn of the event loop: what waits for I/O runs first. A page's chunks, a scan's rounds and a
 * tail's slices each end with one: on SQLite a read resolves without waiting for I/O, and a client
 * that keeps up would otherwise have a whole page read, serialised and written in one go. Shared by
 * read/ and live/, which import nothing of each other.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
