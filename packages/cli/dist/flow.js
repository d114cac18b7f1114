// Upload, create the task, and (optionally) follow it to its end: what `signet-cli upload` and
// the GitHub Action both do. Messages go to `info` (stderr in the CLI, the log in the Action).
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { CliError, EXIT, UsageError } from './errors.js';
import { formatBytes } from './format.js';
import { progressReporter } from './progress.js';
export function checkNotes(notes) {
    if (notes !== undefined && Buffer.byteLength(notes, 'utf8') > 10 * 1024)
        throw new UsageError('Release notes may have at most 10 KB.');
}
export async function uploadAndSign(api, options) {
    const { file, info } = options;
    if (!/\.(ipa|apk)$/i.test(file))
        throw new UsageError(`${file} is not an .ipa or .apk file.`);
    checkNotes(options.notes);
    // Readable before anything is sent, so a typo is a usage error and not an upload.
    const size = await stat(file).then((st) => {
        if (!st.isFile())
            throw new UsageError(`${file} is not a file.`);
        return st.size;
    }, (error) => {
        throw new UsageError(`cannot read ${file}: ${error.code ?? error.message}`);
    });
    const reporter = progressReporter(`upload ${path.basename(file)}`, size);
    const onProgress = (sent) => reporter.update(sent);
    const sent = (await api.uploadResumable(file, { stateDir: options.stateDir, onProgress, onResume: (offset, total) => info(`Resuming the upload at ${formatBytes(offset)} of ${formatBytes(total)}`) })) ??
        (await api.upload(file, onProgress));
    reporter.done();
    const { upload, sha256 } = sent;
    info(`Uploaded ${upload.file_name} (${formatBytes(upload.size)}, ${upload.platform}${upload.bundle_id ? ` ${upload.bundle_id}` : ''}${upload.version ? ` ${upload.version}` : ''}) as ${upload.file_key}`);
    // The same file with the same options is the same request: a retried CI step gets its first task.
    const idempotencyKey = options.idempotencyKey ??
        `signet-cli-${createHash('sha256').update(JSON.stringify({ sha256, cert_type: options.certType, certificate: options.certificate ?? null, notes: options.notes ?? null })).digest('hex')}`;
    const created = await api.request('POST', '/tasks/create', {
        json: { file_key: upload.file_key, cert_type: options.certType, ...(options.certificate ? { certificate_id: options.certificate } : {}), ...(options.notes !== undefined ? { notes: options.notes } : {}) },
        headers: { 'idempotency-key': idempotencyKey },
    });
    info(`Task ${created.task_id} created (${created.status})`);
    if (!options.wait)
        return { upload, task: created };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new CliError(EXIT.unavailable, 'wait_timeout', `Task ${created.task_id} did not finish within ${options.timeoutText}; see it with: signet-cli tasks get ${created.task_id}`)), options.timeoutMs);
    try {
        const task = await api.follow(created.task_id, (s) => info(`Task ${created.task_id}: ${s.status}${s.attempts > 1 ? ` (attempt ${s.attempts})` : ''}`), controller.signal);
        return { upload, task };
    }
    catch (error) {
        if (controller.signal.aborted)
            throw controller.signal.reason;
        throw error;
    }
    finally {
        clearTimeout(timer);
    }
}
