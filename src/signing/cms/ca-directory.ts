// SIGNET_APPLE_CA_DIR (and `--ca-dir`): a folder of CA certificates, DER or PEM, that adds to
// Apple's CAs shipped in apple-ca/. Read once by whoever wires signing; the raw file bytes travel
// in the signing settings (to pool threads too) and are parsed where a chain is completed
// (parseCertificateBundle: a file that holds no certificate, such as a README, adds nothing).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** The bytes of every regular file in `dir`. A folder that cannot be listed is an error: a mistyped setting must not silently mean "no extra CAs". */
export async function readCaDirectory(dir: string): Promise<Buffer[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return Promise.all(entries.filter((e) => e.isFile()).map((e) => readFile(path.join(dir, e.name))));
}
