// Release notes as the API accepts them: plain text or Markdown of at most 10 KB (UTF-8 bytes),
// one field under one of three names (`notes`; `release_notes` and `changelog` are what other
// distribution services and pipelines call it, so they are accepted rather than dropped).
import { AppError } from '../errors.ts';

export const NOTES_MAX_BYTES = 10 * 1024;
export const NOTES_FIELDS = ['notes', 'release_notes', 'changelog'] as const;
export type NotesField = (typeof NOTES_FIELDS)[number];

export function isNotesField(name: string): name is NotesField {
  return (NOTES_FIELDS as readonly string[]).includes(name);
}

/**
 * The notes as stored: line endings made `\n`, surrounding blank space trimmed, null when empty.
 * Throws notes_too_large past 10 KB and invalid_request for control characters other than tab
 * and line breaks (they would only garble the page).
 */
export function normalizeNotes(value: string, field: string = 'notes'): string | null {
  const text = value.replace(/\r\n?/g, '\n').trim();
  if (text === '') return null;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > NOTES_MAX_BYTES) {
    throw new AppError('notes_too_large', `${field} holds ${bytes} bytes; release notes may have at most ${NOTES_MAX_BYTES} bytes (UTF-8).`, {
      details: { field, max_bytes: NOTES_MAX_BYTES },
    });
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) {
    throw new AppError('invalid_request', `${field} holds control characters; send plain text or Markdown.`, { details: { field } });
  }
  return text;
}

/**
 * The notes of a JSON body that may name them under any one of the accepted fields; two at once
 * are ambiguous and refused. Returns undefined when none is given.
 */
export function notesOfBody(body: Partial<Record<NotesField, string>>): string | null | undefined {
  const given = NOTES_FIELDS.filter((name) => body[name] !== undefined);
  if (given.length > 1) throw new AppError('invalid_request', `Send release notes once: ${given.join(' and ')} were both given.`, { details: { field: given[1] } });
  const field = given[0];
  return field === undefined ? undefined : normalizeNotes(body[field]!, field);
}
