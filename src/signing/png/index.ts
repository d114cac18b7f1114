// PNG helpers shared by the engines and the distribution layer.
export { encodeRgbaPng, encodePngChunk, PNG_SIGNATURE, type PngChunk } from './png-write.ts';
