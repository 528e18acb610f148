/** Server-Sent Events parsing, shared by the client package's live tail and the web console. */

export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

/** Splits a Server-Sent Events byte stream, fed in arbitrary chunks, into events. */
export class SseParser {
  private buffer = '';
  private decoder = new TextDecoder();
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  /** The `retry:` the server asked for, in milliseconds. */
  retry: number | undefined;

  push(chunk: Uint8Array | string): SseEvent[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const out: SseEvent[] = [];
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      const width = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      // A lone \r at the end may be half of \r\n: wait for the next chunk.
      if (width === 1 && this.buffer[nl] === '\r' && nl === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(nl + width);
      if (line === '') {
        if (this.data.length > 0) out.push({ event: this.event || 'message', id: this.id, data: this.data.join('\n') });
        this.event = '';
        this.data = [];
        this.id = undefined;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
      else if (field === 'id' && !value.includes('\0')) this.id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
    }
    return out;
  }
}
