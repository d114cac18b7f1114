// Raw HTTP/1.1 over a socket, for requests fetch refuses to send (malformed, oversized headers,
// a Content-Length that lies) and to see whether the server closed the connection.
import net from 'node:net';

/** One raw HTTP/1.1 exchange; resolves with status, headers and body once the server closes or answers fully. */
export function rawRequest(url: string, head: string, body: Buffer | string = '', options: { timeoutMs?: number } = {}): Promise<{ status: number; headers: Record<string, string>; body: string; closed: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let closed = false;
    const timer = setTimeout(() => finish(), options.timeoutMs ?? 5000);
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const [headText = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = headText.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      socket.destroy();
      if (!statusLine) reject(new Error(`no answer: ${text}`));
      else resolve({ status: Number(statusLine.split(' ')[1]), headers, body: Buffer.from(rest.join('\r\n\r\n'), 'latin1').toString('utf8'), closed });
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: *(\d+)/i.exec(text.slice(0, end));
      if (end >= 0 && length && Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(length[1])) setTimeout(finish, 50);
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('error', () => {});
    socket.write(head.replace(/\n/g, '\r\n') + '\r\n\r\n');
    if (body.length) socket.write(body);
  });
}

