// Facts about app icons common to both platforms (inspection reads iOS and Android icons alike).

export type IconFormat = 'png' | 'webp' | 'jpeg';

/** Icons are kilobytes; a "file" above this is not an icon and is not read into memory. */
export const MAX_ICON_BYTES = 8 * 1024 * 1024;
