// Resumable upload with the tus 1.0 protocol (POST /uploads, HEAD for the offset, PATCH the
// rest). The upload's URL is remembered in a small state file keyed by the server, the file's
// absolute path, size and modification time, so running the same command again after an
// interruption (a killed CI step, a dropped connection) sends only the bytes the server lacks.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
export function defaultStateDir() {
    if (process.env.SIGNET_CLI_STATE_DIR)
        return process.env.SIGNET_CLI_STATE_DIR;
    const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
    return path.join(cache, 'signet-cli');
}
export async function fingerprint(base, file) {
    const st = await stat(file);
    const key = createHash('sha256').update(JSON.stringify([base, path.resolve(file), st.size, st.mtimeMs])).digest('hex');
    return { key, size: st.size };
}
async function readState(dir) {
    try {
        return JSON.parse(await readFile(path.join(dir, 'uploads.json'), 'utf8'));
    }
    catch {
        return {};
    }
}
export async function remember(dir, key, url) {
    const entries = await readState(dir);
    if (url === null)
        delete entries[key];
    else
        entries[key] = { url, created: new Date().toISOString() };
    // Entries older than a week are of uploads the server has expired long since.
    for (const [k, v] of Object.entries(entries))
        if (Date.now() - Date.parse(v.created) > 7 * 86_400_000)
            delete entries[k];
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const temp = path.join(dir, `uploads.json.${process.pid}`);
    await writeFile(temp, JSON.stringify(entries, null, 2), { mode: 0o600 });
    await rename(temp, path.join(dir, 'uploads.json'));
}
export async function remembered(dir, key) {
    return (await readState(dir))[key]?.url ?? null;
}
/** The SHA-256 state after the first `end` bytes of the file (a resumed upload hashes the rest as it sends). */
export async function hashPrefix(file, end) {
    const hash = createHash('sha256');
    if (end > 0)
        for await (const chunk of createReadStream(file, { start: 0, end: end - 1 }))
            hash.update(chunk);
    return hash;
}
/** One HTTP request whose body (if any) is the file from `offset` to its end, counted as it goes. */
export function send(url, method, headers, body) {
    return new Promise((resolve, reject) => {
        const request = (url.protocol === 'https:' ? https : http).request(url, { method, headers: { ...headers, 'content-length': String(body ? body.size - body.offset : 0) } });
        request.on('response', (response) => {
            const chunks = [];
            response.on('data', (c) => chunks.push(c));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: response.headers }));
            response.on('error', reject);
        });
        request.on('error', reject);
        if (!body || body.offset >= body.size) {
            request.end();
            return;
        }
        let sent = body.offset;
        const source = createReadStream(body.file, { start: body.offset, highWaterMark: 1024 * 1024 });
        source.on('data', (chunk) => {
            const bytes = chunk;
            body.hash.update(bytes);
            sent += bytes.length;
            body.onProgress(sent);
            if (!request.write(bytes))
                source.pause();
        });
        request.on('drain', () => source.resume());
        request.on('close', () => source.destroy());
        source.on('end', () => request.end());
        source.on('error', (error) => {
            request.destroy(error);
            reject(error);
        });
    });
}
