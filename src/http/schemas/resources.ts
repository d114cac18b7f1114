// TypeBox shapes of the API's resources, mirroring src/http/views.ts (the serializer drops
// undeclared fields, so a field missing here would silently vanish from responses; the HTTP
// tests compare whole bodies to catch that).
import { Type } from 'typebox';
import { AppIdentity, CertType, NullableString, Platform, Timestamp } from './common.ts';

export const TaskStatus = Type.Union(
  ['pending', 'processing', 'succeeded', 'failed', 'canceled'].map((s) => Type.Literal(s)),
  { description: '`pending → processing → succeeded | failed | canceled`.' },
);

export const Upload = Type.Object(
  {
    file_key: Type.String({ description: 'Handle for POST /tasks/create: `tmp_` + 32 url-safe characters.' }),
    file_name: Type.String(),
    size: Type.Integer({ description: 'File size in bytes.' }),
    sha256: Type.String({ description: 'Lowercase hex SHA-256 of the file.' }),
    platform: Platform,
    app_id: NullableString('The app this package was grouped into.'),
    ...AppIdentity,
    created_at: Timestamp,
    expires_at: Type.String({ format: 'date-time', description: 'When the file_key stops working and the file is deleted.' }),
    notes: NullableString('Release notes sent with the upload (plain text or Markdown); a task created from it without notes of its own takes them.'),
  },
  { additionalProperties: false },
);

export const WebhookDelivery = Type.Object(
  {
    event: Type.String(),
    attempt: Type.Integer(),
    outcome: Type.Union([Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('refused')], {
      description: '`refused`: the destination is a private, loopback or metadata address that SIGNET_OUTBOUND_ALLOW does not admit; nothing was sent.',
    }),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    error: NullableString(),
    duration_ms: Type.Integer(),
    at: Timestamp,
  },
  { additionalProperties: false },
);

export const TaskBundle = Type.Object(
  {
    path: Type.String({ description: 'The bundle in the .ipa, e.g. `Payload/A.app/PlugIns/Share.appex/`.' }),
    bundle_id: Type.String(),
    application_identifier: Type.String({ description: 'The App ID it was signed for: `TEAMID.com.example.app`, or a wildcard such as `TEAMID.*`.' }),
    profile: Type.Union(
      [
        Type.Object(
          {
            id: NullableString('The certificate profile (`prf_…`).'),
            name: Type.String(),
            uuid: Type.String(),
            type: Type.String({ description: '`enterprise`, `ad-hoc`, `development` or `app-store`.' }),
            expires_at: Timestamp,
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'Enterprise: the profile that signed the bundle. Super signature: null (each device gets its own ad-hoc profile).' },
    ),
    capabilities: Type.Array(Type.String(), { description: 'Super signature: the App Store Connect capabilities enabled on the bundle\'s App ID.' }),
  },
  { additionalProperties: false },
);

export const TaskWarning = Type.Object(
  {
    code: Type.Literal('entitlement_left_out'),
    message: Type.String(),
    bundle_id: NullableString('The bundle whose signature left it out.'),
    entitlement: NullableString('The entitlement key.'),
    reason: Type.Union([Type.String(), Type.Null()], {
      description:
        '`not_granted` / `value_not_granted` / `needs_app_value`: the bundle\'s profile does not grant it; `identifiers_not_creatable`: it names app groups, ' +
        'iCloud containers or merchant ids the App Store Connect API cannot create; `no_capability`: no capability of the API grants it.',
    }),
  },
  { additionalProperties: false },
);

export const TaskLinks = Type.Object(
  {
    distribution_id: Type.String({ description: '`dst_…`: the install link (GET/PATCH /distributions/{id}).' }),
    install_url: Type.String({ description: 'The public install page.' }),
    qr_code_url: Type.String({ description: 'QR code of the install page (SVG).' }),
    app_url: NullableString("The app's permanent link, which always serves its newest release."),
    download_url: Type.String({ description: 'Direct download of the signed package (counted).' }),
    itms_services_url: NullableString('iOS: the `itms-services://` link that installs the app.'),
    manifest_url: NullableString('iOS: the OTA manifest.'),
  },
  { additionalProperties: false },
);

export const Task = Type.Object(
  {
    task_id: Type.String({ description: '`tsk_…`' }),
    status: TaskStatus,
    platform: Platform,
    cert_type: Type.String(),
    file_key: Type.String(),
    file_name: Type.String(),
    certificate_id: NullableString(),
    callback_url: NullableString(),
    app_id: NullableString(),
    app: Type.Object(AppIdentity, { additionalProperties: false }),
    attempts: Type.Integer({ description: 'Runs started so far (a run lost to a crash counts).' }),
    max_attempts: Type.Integer(),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false }), Type.Null()], {
      description: 'Set when the task failed or was canceled; `code` is from the error catalogue.',
    }),
    artifact: Type.Union(
      [
        Type.Object(
          { size: Type.Integer({ description: 'Bytes.' }), sha256: Type.String(), download_url: Type.String() },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The signed package, once the task succeeded.' },
    ),
    verification: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'What the verifier checked on the signed output.' }),
    bundles: Type.Union([Type.Array(TaskBundle), Type.Null()], { description: 'iOS: every provisioned bundle (app, extensions…) with the App ID and profile it was signed with; null before success.' }),
    warnings: Type.Array(TaskWarning, { description: 'What signing left out and why (e.g. entitlements a profile does not grant).' }),
    webhook_deliveries: Type.Array(WebhookDelivery, { description: 'Every delivery attempt of this task\'s webhooks, oldest first.' }),
    notes: NullableString('Release notes (plain text or Markdown) shown on the install page and in the history.'),
    links: Type.Union([TaskLinks, Type.Null()], { description: 'Where the signed app is installed from, once the task succeeded.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    started_at: Type.Union([Timestamp, Type.Null()]),
    finished_at: Type.Union([Timestamp, Type.Null()]),
  },
  { additionalProperties: false },
);

export const CreateTaskBody = Type.Object(
  {
    file_key: Type.String({ minLength: 1, description: 'From POST /apps/upload.' }),
    cert_type: CertType,
    certificate_id: Type.Optional(Type.String({ minLength: 1, description: 'Default: the account\'s newest certificate of the right kind.' })),
    callback_url: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2048, description: 'Receives `task.succeeded` / `task.failed`.' })),
    profiles: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9.-]{1,255}$' }), Type.String({ pattern: '^prf_[A-Za-z0-9]{1,64}$' }), {
        maxProperties: 100,
        description:
          'iOS enterprise: the certificate profile (`prf_…`) to sign each named bundle id with, e.g. `{"com.example.app": "prf_…"}`. ' +
          'Bundles not named take the certificate profile whose App ID matches them most specifically (explicit before wildcard).',
      }),
    ),
    notes: Type.Optional(Type.String({ description: 'Release notes, plain text or Markdown, at most 10 KB (10,240 bytes of UTF-8; more: 400 `notes_too_large`). Default: the notes sent with the upload.' })),
    release_notes: Type.Optional(Type.String({ description: 'Another name for `notes` (send one of them).' })),
    changelog: Type.Optional(Type.String({ description: 'Another name for `notes` (send one of them).' })),
  },
  { additionalProperties: false },
);

export const CreatedTask = Type.Object({ task_id: Type.String(), status: TaskStatus }, { additionalProperties: false });

export const TaskList = Type.Object(
  {
    items: Type.Array(Task),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  { additionalProperties: false },
);

export const CertificateProfile = Type.Object(
  {
    id: Type.String({ description: '`prf_…`' }),
    name: NullableString(),
    uuid: NullableString(),
    app_id: NullableString('The App ID (application-identifier), e.g. `TEAMID.com.example.app` or `TEAMID.*`.'),
    type: NullableString('`enterprise`, `ad-hoc`, `development` or `app-store`.'),
    team_id: NullableString(),
    expires_at: Type.Union([Timestamp, Type.Null()]),
    entitlements: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'The entitlements the profile grants.' }),
    warnings: Type.Optional(
      Type.Array(Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false }), { description: 'Upload answers: accepted, but needs attention (`profile_expiring`: it expires within 7 days).' }),
    ),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

const HealthStateSchema = Type.Union(
  ['ok', 'expiring', 'expired', 'revoked', 'profile_expired', 'profile_mismatch', 'unknown'].map((s) => Type.Literal(s)),
  { description: '`ok`; `expiring` (certificate or a profile within SIGNET_CERT_EXPIRING_DAYS); `expired`; `revoked` (its OCSP responder says so); `profile_expired`; `profile_mismatch` (no profile, or one of another team); `unknown` (revocation could not be checked: `reason` says why).' },
);

export const Health = Type.Object(
  {
    state: HealthStateSchema,
    reason: NullableString('Why, for the state shown; null when ok.'),
    findings: Type.Array(Type.Object({ state: HealthStateSchema, reason: Type.String() }, { additionalProperties: false }), { description: 'Every finding, most severe first.' }),
    expires_at: Type.Union([Timestamp, Type.Null()], { description: 'The earliest expiry of the certificate and its profiles.' }),
    revocation: Type.Union([
      Type.Object(
        {
          status: Type.Union(['good', 'revoked', 'unknown', 'unchecked', 'not_applicable', 'error'].map((s) => Type.Literal(s)), { description: '`good`, `revoked`, `unknown`: the OCSP responder\'s answer; `not_applicable`: the certificate names no responder; `error`: asking failed (see reason).' }),
          responder: NullableString('The OCSP responder URL from the certificate\'s Authority Information Access.'),
          checked_at: Type.Union([Timestamp, Type.Null()]),
          next_update: Type.Union([Timestamp, Type.Null()], { description: 'The answer is reused until then (RFC 6960 nextUpdate).' }),
          revoked_at: Type.Union([Timestamp, Type.Null()]),
          revocation_reason: NullableString(),
          reason: NullableString(),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);

export const Certificate = Type.Object(
  {
    id: Type.String({ description: '`crt_…`' }),
    kind: Type.Union([Type.Literal('ios_enterprise'), Type.Literal('ios_adhoc'), Type.Literal('ios_development'), Type.Literal('android')], {
      description: '`ios_enterprise`: in-house profiles; `ios_adhoc`: ad-hoc profiles (installs on the devices they list); `ios_development`: development profiles; `android`: a keystore.',
    }),
    name: NullableString(),
    subject: NullableString('Subject of the signing certificate.'),
    team_id: NullableString('Apple team id (iOS), or the certificate\'s OU.'),
    fingerprint: Type.String({ description: 'Lowercase hex SHA-256 of the certificate (DER).' }),
    alias: NullableString('Keystore alias (Android).'),
    not_before: Type.Union([Timestamp, Type.Null()]),
    not_after: Type.Union([Timestamp, Type.Null()]),
    profile: Type.Union(
      [
        Type.Object(
          { name: NullableString(), app_id: NullableString(), type: NullableString(), expires_at: Type.Union([Timestamp, Type.Null()]) },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'iOS: the first of `profiles` (kept for clients of certificates with one profile).' },
    ),
    profiles: Type.Array(CertificateProfile, { description: 'iOS: every provisioning profile of the certificate, oldest first.' }),
    live_links: Type.Integer({ description: 'Install links signed with it that can still be used (enabled, unexpired, quota left).' }),
    health: Health,
    warnings: Type.Optional(
      Type.Array(Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false }), { description: 'Upload answers: accepted, but needs attention (`profile_expiring`: a profile expires within 7 days).' }),
    ),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

export const Release = Type.Object(
  {
    distribution_id: Type.String({ description: '`dst_…`' }),
    task_id: Type.String(),
    version: NullableString(),
    build: NullableString(),
    url: NullableString('The install page.'),
    downloads: Type.Integer(),
    enabled: Type.Boolean(),
    created_at: Timestamp,
    notes: NullableString('Release notes (plain text or Markdown).'),
  },
  { additionalProperties: false },
);

export const AppSummary = Type.Object(
  {
    app_id: Type.String({ description: '`app_…`' }),
    platform: Platform,
    bundle_id: Type.String(),
    name: NullableString(),
    created_at: Timestamp,
    updated_at: Timestamp,
    icon_url: NullableString('Icon of the newest release (PNG).'),
    app_url: NullableString("The app's permanent link (its newest release)."),
    qr_code_url: NullableString('QR code of the permanent link (SVG).'),
    latest_release: Type.Union([Release, Type.Null()], { description: 'The newest install link.' }),
    downloads: Type.Integer({ description: 'Downloads of all its links.' }),
  },
  { additionalProperties: false },
);

export const AppDetail = Type.Object(
  {
    ...AppSummary.properties,
    uploads: Type.Array(Upload, { description: 'Newest first.' }),
    tasks: Type.Array(Task, { description: 'Newest first.' }),
    releases: Type.Array(Release, { description: 'Install links of this app, newest first.' }),
    downloads_by_day: Type.Array(Type.Object({ day: Type.String({ description: 'UTC day, YYYY-MM-DD.' }), downloads: Type.Integer() }, { additionalProperties: false }), {
      description: 'Downloads of all its links per UTC day, newest first.',
    }),
  },
  { additionalProperties: false },
);

export const IdParam = (name: string, description: string) => Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 100, description }) });
