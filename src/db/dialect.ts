// SQLite and PostgreSQL differences, as named capability flags in one table (so code asks
// "does this dialect have X?" instead of scattering `if (dialect === 'postgres')`).
export type DialectName = 'sqlite' | 'postgres';

export interface DialectFeatures {
  /** `FOR UPDATE SKIP LOCKED` exists; on SQLite the single writer already serialises claims. */
  skipLocked: boolean;
  /** Column type for byte counts above 2^31. SQLite INTEGER is 64-bit already. */
  bigintType: 'integer' | 'bigint';
}

export const DIALECT_FEATURES: Readonly<Record<DialectName, DialectFeatures>> = {
  sqlite: { skipLocked: false, bigintType: 'integer' },
  postgres: { skipLocked: true, bigintType: 'bigint' },
};
