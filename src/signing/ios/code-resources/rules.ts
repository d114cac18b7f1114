// Resource rules of `_CodeSignature/CodeResources` and the rule matcher (Apple Security,
// resources.cpp `ResourceBuilder::findRule`). Hand-written: no library implements Apple's rules.
//
// Signet writes the rule set Xcode writes for iOS apps (seen byte for byte in Apple-made fixtures
// from 2015 and 2018: isign Test.app, fastlane very-capable-app). Its `^` rule (weight 20) beats
// the `nested` rules (weight 10), so on iOS everything inside nested frameworks, extensions and
// watch apps is sealed as a plain resource — the "flat" sealing that makes inside-out signing
// necessary (ios-signing.md §10).

export interface ResourceRule {
  /** The regular expression, exactly as written in the plist key. */
  pattern: string;
  weight: number;
  optional: boolean;
  omit: boolean;
  nested: boolean;
  /** Whether Apple writes the rule as bare `<true/>` (no flags, default weight). */
  plain: boolean;
}

interface RuleSpec {
  pattern: string;
  weight?: number;
  optional?: boolean;
  omit?: boolean;
  nested?: boolean;
}

// resources.cpp: rules without an explicit weight weigh 1.
function rule(spec: RuleSpec): ResourceRule {
  const plain = spec.weight === undefined && !spec.optional && !spec.omit && !spec.nested;
  return { pattern: spec.pattern, weight: spec.weight ?? 1, optional: spec.optional ?? false, omit: spec.omit ?? false, nested: spec.nested ?? false, plain };
}

/** `rules` (V1, sealed into `files`). */
export const IOS_RULES: readonly ResourceRule[] = [
  rule({ pattern: '^' }),
  rule({ pattern: '^.*\\.lproj/', optional: true, weight: 1000 }),
  rule({ pattern: '^.*\\.lproj/locversion.plist$', omit: true, weight: 1100 }),
  rule({ pattern: '^Base\\.lproj/', weight: 1010 }),
  rule({ pattern: '^version.plist$' }),
];

/** `rules2` (V2, sealed into `files2`). */
export const IOS_RULES2: readonly ResourceRule[] = [
  rule({ pattern: '.*\\.dSYM($|/)', weight: 11 }),
  rule({ pattern: '^', weight: 20 }),
  rule({ pattern: '^(.*/)?\\.DS_Store$', omit: true, weight: 2000 }),
  rule({ pattern: '^(Frameworks|SharedFrameworks|PlugIns|Plug-ins|XPCServices|Helpers|MacOS|Library/(Automator|Spotlight|LoginItems))/', nested: true, weight: 10 }),
  rule({ pattern: '^.*' }),
  rule({ pattern: '^.*\\.lproj/', optional: true, weight: 1000 }),
  rule({ pattern: '^.*\\.lproj/locversion.plist$', omit: true, weight: 1100 }),
  rule({ pattern: '^Base\\.lproj/', weight: 1010 }),
  rule({ pattern: '^Info\\.plist$', omit: true, weight: 20 }),
  rule({ pattern: '^PkgInfo$', omit: true, weight: 20 }),
  rule({ pattern: '^[^/]+$', nested: true, weight: 10 }),
  rule({ pattern: '^embedded\\.provisionprofile$', weight: 20 }),
  rule({ pattern: '^version\\.plist$', weight: 20 }),
];

/**
 * Paths never sealed, whatever the rules (resources.cpp: the `_CodeSignature` directory,
 * `CodeResources` and `_MASReceipt` at the bundle root; CodeSigner also excludes the main executable).
 */
export function isExcluded(relativePath: string, mainExecutable: string | undefined): boolean {
  if (relativePath === mainExecutable) return true;
  const first = relativePath.split('/', 1)[0];
  return first === '_CodeSignature' || relativePath === 'CodeResources' || first === '_MASReceipt';
}

export class RuleMatcher {
  private readonly compiled: Array<{ rule: ResourceRule; regex: RegExp }>;

  constructor(rules: readonly ResourceRule[]) {
    // Apple compiles the keys as POSIX extended regexes; the iOS patterns use only the common
    // subset, which JavaScript reads the same way.
    this.compiled = rules.map((r) => ({ rule: r, regex: new RegExp(r.pattern, 'u') }));
  }

  /**
   * resources.cpp findRule: the matching rule with the highest weight. Apple breaks ties by
   * dictionary iteration order, which is unspecified; Apple's outputs omit `Info.plist` and
   * `PkgInfo` from files2 (omit, weight 20, ties with `^`, weight 20), so an omit rule wins a tie.
   */
  match(relativePath: string): ResourceRule | undefined {
    let best: ResourceRule | undefined;
    for (const { rule: candidate, regex } of this.compiled) {
      if (!regex.test(relativePath)) continue;
      if (best === undefined || candidate.weight > best.weight || (candidate.weight === best.weight && candidate.omit && !best.omit)) best = candidate;
    }
    return best;
  }
}

/** Rules parsed from an existing CodeResources (`rules`/`rules2` dictionaries). */
export function ruleFromPlist(pattern: string, value: { type: string; value: unknown }): ResourceRule {
  if (value.type === 'boolean') return rule({ pattern });
  if (value.type !== 'dict') return rule({ pattern });
  const dict = value.value as Map<string, { type: string; value: unknown }>;
  const flag = (key: string): boolean => dict.get(key)?.type === 'boolean' && dict.get(key)?.value === true;
  const weightValue = dict.get('weight');
  const weight = weightValue?.type === 'real' || weightValue?.type === 'integer' ? Number(weightValue.value) : undefined;
  return { ...rule({ pattern, ...(weight === undefined ? {} : { weight }), optional: flag('optional'), omit: flag('omit'), nested: flag('nested') }), plain: false };
}
