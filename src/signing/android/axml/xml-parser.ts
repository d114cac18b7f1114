// Binary XML (AXML) → element tree. Used for AndroidManifest.xml and for compiled XML
// drawables (adaptive icons). Attributes keep their resource id from the resource map, because
// obfuscators rename or strip attribute name strings and the platform itself matches by id
// (apksig AndroidBinXmlParser; research note android-signing.md §14.1).
import {
  CHUNK_HEADER_SIZE, RES_STRING_POOL_TYPE, RES_XML_CDATA_TYPE, RES_XML_END_ELEMENT_TYPE, RES_XML_END_NAMESPACE_TYPE,
  RES_XML_RESOURCE_MAP_TYPE, RES_XML_START_ELEMENT_TYPE, RES_XML_START_NAMESPACE_TYPE, RES_XML_TYPE,
  childChunks, invalid, readChunk, u16, u32, type Chunk,
} from './chunk.ts';
import { readResValue, RES_VALUE_SIZE, TYPE_STRING, type ResValue } from './res-value.ts';
import { NO_STRING, StringPool } from './string-pool.ts';

export interface XmlAttribute {
  /** Namespace URI, or null (e.g. the manifest's `package`). */
  readonly namespace: string | null;
  readonly name: string;
  /** The attribute's resource id from the resource map, or 0 when it has none. */
  readonly resourceId: number;
  /** The original string value (aapt keeps it for strings), or null. */
  readonly rawValue: string | null;
  readonly value: ResValue;
  /** The string for TYPE_STRING values (resolved from the document's pool), else null. */
  readonly stringValue: string | null;
}

export interface XmlElement {
  readonly namespace: string | null;
  readonly name: string;
  readonly attributes: readonly XmlAttribute[];
  readonly children: XmlElement[];
  readonly lineNumber: number;
}

export interface XmlDocument {
  readonly root: XmlElement;
}

/** Deeper nesting than this is not a real manifest or drawable; refuse rather than recurse. */
export const MAX_XML_DEPTH = 256;

// ResourceTypes.h: struct ResXMLTree_node { ResChunk_header header; uint32_t lineNumber; ResStringPool_ref comment; }
const NODE_HEADER_SIZE = 16;
// ResourceTypes.h: struct ResXMLTree_attribute { ns; name; rawValue; Res_value typedValue; } = 20 bytes
const ATTRIBUTE_MIN_SIZE = 12 + RES_VALUE_SIZE;

/** Parses a whole binary XML document. Throws SigningError manifest_invalid on any malformation. */
export function parseAxml(buf: Buffer): XmlDocument {
  const what = 'binary XML';
  const top = readChunk(buf, 0, buf.length, what);
  // ResourceTypes.h: ResXMLTree_header { ResChunk_header header; } with type RES_XML_TYPE.
  if (top.type !== RES_XML_TYPE) invalid(`${what}: first chunk type is 0x${top.type.toString(16)}, not RES_XML_TYPE (0x0003)`);

  let pool: StringPool | null = null;
  let resourceMap: number[] = [];
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;

  for (const chunk of childChunks(buf, top.headerSize, top.size, what)) {
    switch (chunk.type) {
      case RES_STRING_POOL_TYPE:
        // ResXMLTree::setTo keeps the first pool; a second one is unexpected but harmless.
        pool ??= new StringPool(buf, chunk);
        break;
      case RES_XML_RESOURCE_MAP_TYPE:
        resourceMap = readResourceMap(buf, chunk);
        break;
      case RES_XML_START_ELEMENT_TYPE: {
        if (pool === null) invalid(`${what}: element before the string pool`);
        if (root !== null && stack.length === 0) invalid(`${what}: a second root element`);
        if (stack.length >= MAX_XML_DEPTH) invalid(`${what}: elements nested deeper than ${MAX_XML_DEPTH}`);
        const element = readStartElement(buf, chunk, pool, resourceMap);
        const parent = stack.at(-1);
        if (parent === undefined) root = element;
        else parent.children.push(element);
        stack.push(element);
        break;
      }
      case RES_XML_END_ELEMENT_TYPE:
        nodeHeader(chunk, what);
        if (stack.pop() === undefined) invalid(`${what}: end tag without a start tag at ${chunk.offset}`);
        break;
      case RES_XML_START_NAMESPACE_TYPE:
      case RES_XML_END_NAMESPACE_TYPE:
      case RES_XML_CDATA_TYPE:
        // Namespace URIs are carried by each attribute and element; text content is not needed
        // for manifests or drawables.
        nodeHeader(chunk, what);
        break;
      default:
        // ResXMLParser::nextNode skips unknown chunk types.
        break;
    }
  }
  if (root === null) invalid(`${what}: no root element`);
  if (stack.length !== 0) invalid(`${what}: ${stack.length} element(s) not closed`);
  return { root };
}

function nodeHeader(chunk: Chunk, what: string): void {
  if (chunk.headerSize < NODE_HEADER_SIZE) invalid(`${what}: node header size ${chunk.headerSize} < ${NODE_HEADER_SIZE}`);
}

function readResourceMap(buf: Buffer, chunk: Chunk): number[] {
  // ResourceTypes.h: the resource map is a uint32_t array after the header, one id per string
  // index (the first N attribute names).
  const count = Math.floor((chunk.size - chunk.headerSize) / 4);
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push(u32(buf, chunk.offset + chunk.headerSize + i * 4, 'resource map'));
  return ids;
}

function readStartElement(buf: Buffer, chunk: Chunk, pool: StringPool, resourceMap: number[]): XmlElement {
  const what = `start element at ${chunk.offset}`;
  nodeHeader(chunk, what);
  const end = chunk.offset + chunk.size;
  const lineNumber = u32(buf, chunk.offset + CHUNK_HEADER_SIZE, what);
  // ResourceTypes.h: struct ResXMLTree_attrExt { ns; name; uint16_t attributeStart;
  // uint16_t attributeSize; uint16_t attributeCount; idIndex; classIndex; styleIndex; }
  const ext = chunk.offset + chunk.headerSize;
  if (ext + 20 > end) invalid(`${what}: truncated element header`);
  const namespace = pool.get(u32(buf, ext, what));
  const name = pool.get(u32(buf, ext + 4, what));
  if (name === null) invalid(`${what}: element without a name`);
  const attributeStart = u16(buf, ext + 8, what);
  const attributeSize = u16(buf, ext + 10, what);
  const attributeCount = u16(buf, ext + 12, what);
  if (attributeCount > 0 && attributeSize < ATTRIBUTE_MIN_SIZE) invalid(`${what}: attribute size ${attributeSize} < ${ATTRIBUTE_MIN_SIZE}`);
  const first = ext + attributeStart;
  if (first + attributeCount * attributeSize > end) invalid(`${what}: ${attributeCount} attributes run past the chunk`);

  const attributes: XmlAttribute[] = [];
  for (let i = 0; i < attributeCount; i++) {
    const at = first + i * attributeSize;
    const nameIndex = u32(buf, at + 4, what);
    const attrName = pool.get(nameIndex);
    const value = readResValue(buf, at + 12, what);
    // TYPE_STRING data is an index into the same pool.
    const stringValue = value.type === TYPE_STRING ? pool.get(value.data) : null;
    attributes.push({
      namespace: pool.get(u32(buf, at, what)),
      name: attrName ?? '',
      resourceId: nameIndex !== NO_STRING && nameIndex < resourceMap.length ? resourceMap[nameIndex]! : 0,
      rawValue: pool.get(u32(buf, at + 8, what)),
      value,
      stringValue,
    });
  }
  return { namespace, name, attributes, children: [], lineNumber };
}

export const ANDROID_NS = 'http://schemas.android.com/apk/res/android';

/**
 * The attribute with this resource id; failing that, an android-namespace attribute of that
 * name that carries no id (documents built without a resource map). With `resourceId` null, the
 * namespace-less attribute of that name (the manifest's `package`).
 */
export function findAttribute(element: XmlElement, resourceId: number | null, name: string): XmlAttribute | undefined {
  if (resourceId === null) return element.attributes.find((a) => a.namespace === null && a.name === name);
  return element.attributes.find((a) => a.resourceId === resourceId)
    ?? element.attributes.find((a) => a.resourceId === 0 && a.namespace === ANDROID_NS && a.name === name);
}
