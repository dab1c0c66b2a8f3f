import QRCode from 'qrcode';

/**
 * The QR code of an identifier's value as an image (issue 21 item 1: the console's QR preview, `lintel
 * identifiers qr`, the guest's page and e-mail, the wallet pass's barcode is drawn by the phone). `qrcode` (a
 * maintained, dependency-light encoder) makes it; error correction M, the quiet zone of 4 modules the
 * standard asks for, black on white so every reader (a panel's camera too) takes it.
 */
export const QrFormats = ['png', 'svg'] as const;
export type QrFormat = (typeof QrFormats)[number];

export const QR_CONTENT_TYPES: Record<QrFormat, string> = {
  png: 'image/png',
  svg: 'image/svg+xml; charset=utf-8',
};

const common = { errorCorrectionLevel: 'M', margin: 4 } as const;

/** A PNG of `width` pixels a side (the encoder rounds to whole modules). */
export function qrPng(value: string, width = 512): Promise<Buffer> {
  return QRCode.toBuffer(value, { ...common, type: 'png', width });
}

/** An SVG, drawn at any size. */
export function qrSvg(value: string): Promise<string> {
  return QRCode.toString(value, { ...common, type: 'svg' });
}

/** The SVG as a data URL (the public pass page shows it without a second request). */
export async function qrSvgDataUrl(value: string): Promise<string> {
  return `data:image/svg+xml;base64,${Buffer.from(await qrSvg(value)).toString('base64')}`;
}
