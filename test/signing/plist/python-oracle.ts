// Python's plistlib as an independent oracle for the plist model. Values cross the process
// boundary as tagged JSON so every type stays exact (ints as decimal strings, reals as raw bits).
import { spawnSync } from 'node:child_process';
import type { PlistValue } from '../../../src/signing/plist/index.ts';

export type Tagged =
  | { t: 'str'; v: string }
  | { t: 'int'; v: string }
  | { t: 'real'; v: string }
  | { t: 'bool'; v: boolean }
  | { t: 'date'; v: number }
  | { t: 'data'; v: string }
  | { t: 'arr'; v: Tagged[] }
  | { t: 'dict'; v: [string, Tagged][] };

export function toTagged(value: PlistValue): Tagged {
  switch (value.type) {
    case 'string': return { t: 'str', v: value.value };
    case 'integer': return { t: 'int', v: value.value.toString() };
    case 'real': {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(value.value);
      return { t: 'real', v: b.toString('hex') };
    }
    case 'boolean': return { t: 'bool', v: value.value };
    case 'date': return { t: 'date', v: value.value };
    case 'data': return { t: 'data', v: Buffer.from(value.value).toString('base64') };
    case 'array': return { t: 'arr', v: value.value.map(toTagged) };
    case 'dict': return { t: 'dict', v: [...value.value].map(([k, v]) => [k, toTagged(v)]) };
    case 'uid': throw new Error('UIDs are not exchanged with the oracle');
  }
}

const SCRIPT = String.raw`
import base64, datetime, json, plistlib, struct, sys
EPOCH = datetime.datetime(2001, 1, 1)
def build(t):
    k, v = t['t'], t.get('v')
    if k == 'str': return v
    if k == 'int': return int(v)
    if k == 'real': return struct.unpack('>d', bytes.fromhex(v))[0]
    if k == 'bool': return v
    if k == 'date': return EPOCH + datetime.timedelta(seconds=v)
    if k == 'data': return base64.b64decode(v)
    if k == 'arr': return [build(x) for x in v]
    if k == 'dict': return {kk: build(vv) for kk, vv in v}
def tag(x):
    if isinstance(x, bool): return {'t': 'bool', 'v': x}
    if isinstance(x, int): return {'t': 'int', 'v': str(x)}
    if isinstance(x, float): return {'t': 'real', 'v': struct.pack('>d', x).hex()}
    if isinstance(x, str): return {'t': 'str', 'v': x}
    if isinstance(x, datetime.datetime): return {'t': 'date', 'v': (x - EPOCH).total_seconds()}
    if isinstance(x, bytes): return {'t': 'data', 'v': base64.b64encode(x).decode()}
    if isinstance(x, list): return {'t': 'arr', 'v': [tag(i) for i in x]}
    if isinstance(x, dict): return {'t': 'dict', 'v': [[k, tag(v)] for k, v in x.items()]}
    raise TypeError(type(x))
req = json.load(sys.stdin)
out = []
for case in req['cases']:
    value = build(case['value'])
    res = {
        'binary': plistlib.dumps(value, fmt=plistlib.FMT_BINARY, sort_keys=False).hex(),
        'xml': plistlib.dumps(value, fmt=plistlib.FMT_XML).hex(),
    }
    for name in ('ours_xml', 'ours_binary'):
        if name in case:
            res[name + '_read'] = tag(plistlib.loads(bytes.fromhex(case[name])))
    out.append(res)
json.dump(out, sys.stdout)
`;

export interface OracleCase {
  value: PlistValue;
  oursXml?: Buffer;
  oursBinary?: Buffer;
}

export interface OracleResult {
  binary: Buffer;
  xml: Buffer;
  oursXmlRead?: Tagged;
  oursBinaryRead?: Tagged;
}

export function pythonAvailable(): boolean {
  return spawnSync('python3', ['-c', 'import plistlib'], { stdio: 'ignore' }).status === 0;
}

/** One python3 process for a batch of cases: plistlib's encodings of each value and its reading of ours. */
export function runOracle(cases: OracleCase[]): OracleResult[] {
  const input = JSON.stringify({
    cases: cases.map((c) => ({
      value: toTagged(c.value),
      ...(c.oursXml ? { ours_xml: c.oursXml.toString('hex') } : {}),
      ...(c.oursBinary ? { ours_binary: c.oursBinary.toString('hex') } : {}),
    })),
  });
  const run = spawnSync('python3', ['-c', SCRIPT], { input, maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`python3 plistlib oracle failed: ${run.stderr.toString()}`);
  const raw = JSON.parse(run.stdout.toString()) as { binary: string; xml: string; ours_xml_read?: Tagged; ours_binary_read?: Tagged }[];
  return raw.map((r) => ({
    binary: Buffer.from(r.binary, 'hex'),
    xml: Buffer.from(r.xml, 'hex'),
    ...(r.ours_xml_read ? { oursXmlRead: r.ours_xml_read } : {}),
    ...(r.ours_binary_read ? { oursBinaryRead: r.ours_binary_read } : {}),
  }));
}
