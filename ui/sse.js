// Server-Sent Events parsed from a byte stream (the WHATWG framing). Pure:
// feed it decoded text as it arrives, it returns the complete events.
export class SseParser {
  constructor() { this.buffer = ''; this.reset(); }
  reset() { this.event = { id: '', event: 'message', data: [] }; }

  feed(text) {
    this.buffer += text;
    const events = [];
    let nl;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      // A CR that ends the chunk may be the first half of a CRLF: wait for the next one.
      if (nl === this.buffer.length - 1 && this.buffer[nl] === '\r') break;
      const len = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + len);
      if (line === '') {
        if (this.event.data.length) events.push({ ...this.event, data: this.event.data.join('\n') });
        this.reset();
        continue;
      }
      if (line.startsWith(':')) continue;  // a comment (keep-alive)
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') this.event.data.push(value);
      else if (field === 'event') this.event.event = value;
      else if (field === 'id') this.event.id = value;
    }
    return events;
  }
}
