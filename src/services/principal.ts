// Who is calling: the account every query is scoped to, and the key (for rate limits and logs).
export interface Principal {
  accountId: string;
  keyId: string;
}
