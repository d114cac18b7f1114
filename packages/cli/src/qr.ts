// The install link as a QR code drawn with Unicode half blocks, two modules per character row,
// dark on light with the quiet zone, so a phone can scan it from a terminal or a CI log.
import { renderUnicodeCompact } from 'uqr';

export function terminalQr(text: string): string {
  return renderUnicodeCompact(text, { border: 2 });
}
