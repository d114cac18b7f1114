// QR codes of install-page URLs, as inline SVG for the page and as PNG for chat apps and print.
import type QRCodeModule from 'qrcode';
import { escapeHtml } from './html.ts';

const OPTIONS = { errorCorrectionLevel: 'M', margin: 2 } as const;

// Loaded on the first QR code, not at server start.
const qrcode = async (): Promise<typeof QRCodeModule> => (await import('qrcode')).default;

export async function qrSvg(text: string, label = 'QR code of this page'): Promise<string> {
  const svg = await (await qrcode()).toString(text, { ...OPTIONS, type: 'svg' });
  // Label the image for assistive technology; the caption beside it explains what to do.
  return svg.replace('<svg ', `<svg role="img" aria-label="${escapeHtml(label)}" `);
}

export async function qrPng(text: string, size = 512): Promise<Buffer> {
  return (await qrcode()).toBuffer(text, { ...OPTIONS, type: 'png', width: size });
}
