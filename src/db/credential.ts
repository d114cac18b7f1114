// The decrypted form of a stored certificate's signing material: what the certificates
// repository unseals and the signers consume.
/** Decrypted signing material, exactly as the account uploaded it. */
export type Credential =
  | {
      kind: 'android';
      keystore: Buffer; // PKCS#12, JKS or PEM key (PEM/PKCS#8 keys come with `certificate`)
      certificate: Buffer | null; // PEM/DER certificate when the key was uploaded on its own
      password: string | null;
      keyPassword: string | null;
      alias: string | null;
    }
  | {
      kind: 'ios_enterprise';
      p12: Buffer;
      password: string;
      /** The certificate's provisioning profiles (.mobileprovision), each with its `prf_…` id. */
      profiles: Array<{ id: string; bytes: Buffer }>;
    }
  | {
      /** Super signature: the signer picks one of the account's Apple developer accounts itself. */
      kind: 'developer_accounts';
      accountId: string;
    };
