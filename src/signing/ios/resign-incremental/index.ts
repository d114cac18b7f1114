// Incremental per-device re-signing of a prepared .ipa (see SPECIFICATION.md in this folder):
//   const template = await buildIncrementalTemplate(prepared, sharedSink)   // once per prepared build
//   const part = signForProfile(template, { identity, profile })            // per device, milliseconds
//   .ipa = shared file bytes ++ part.chunks
export { buildIncrementalTemplate, type BuildTemplateOptions, type IncrementalTemplate } from './template.ts';
export { signForProfile, type DevicePart, type SignForProfileOptions } from './sign-for-profile.ts';
