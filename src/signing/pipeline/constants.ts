/** API 24: the first Android platform that reads APK Signature Scheme v2; below it only v1 protects the APK. */
export const FIRST_V2_SDK = 24;
