import type { SocketAccount, SocketPieces } from "../channel.ts";
import { parsePayload } from "../parse-json-body.ts";
import {
  matrixAccessTokenEnv,
  matrixAccounts,
  matrixAllowsPrivateNetwork,
  matrixHomeserver,
  type MatrixAccount,
  type MatrixChannelConfig,
} from "./config.ts";
import { parseMatrixEvent } from "./parse.ts";
import { matrixSocketPayloadSchema } from "./payloads.ts";

/**
 * Matrix is served by the companion's /sync connector (functions/channels/matrix/companion/connector.ts):
 * every enabled account without `encryption: true` (end-to-end encrypted rooms are a separate
 * step; such an account is named in the log and not connected). The connector gets the homeserver,
 * the private-network flag, the invite policy (`autoJoin`, `autoJoinAllowlist`) and the env var
 * name of the access token; the token itself never travels. Events come back raw and are parsed
 * here (parse.ts).
 */
export const matrixSocket: SocketPieces<MatrixAccount, MatrixChannelConfig> = {
  accounts(root, env) {
    const accounts = matrixAccounts(root);
    return accounts.flatMap((account): SocketAccount<MatrixAccount>[] => {
      const where = `channels.matrix (account ${account.accountId})`;
      const homeserver = matrixHomeserver(account, env);
      if (!homeserver) {
        console.error(`${where}: no homeserver (or MATRIX_HOMESERVER); not connected`);
        return [];
      }
      if (account.encryption) {
        console.error(
          `${where}: encryption is on, and edgeclaw serves unencrypted Matrix rooms only; not connected (set encryption: false)`,
        );
        return [];
      }
      const tokenEnv = matrixAccessTokenEnv(account);
      if (!tokenEnv)
        console.error(
          `${where}: accessToken must be a SecretRef or "\${VAR}" for the companion to read it`,
        );
      return [
        {
          accountId: account.accountId,
          label: accounts.length > 1 ? `Matrix (account ${account.accountId})` : "Matrix",
          account,
          connector: {
            settings: {
              homeserver,
              dangerouslyAllowPrivateNetwork: matrixAllowsPrivateNetwork(account),
              ...(account.userId ? { userId: account.userId } : {}),
              autoJoin: account.autoJoin,
              autoJoinAllowlist: account.autoJoinAllowlist,
              initialSyncLimit: account.initialSyncLimit,
            },
            secretEnv: tokenEnv ? { accessToken: tokenEnv } : {},
          },
        },
      ];
    });
  },
  parse(event, socketAccount) {
    const payload = parsePayload(event.payload, matrixSocketPayloadSchema, "a Matrix room event");
    if (!payload.ok) return { kind: "malformed", reason: payload.reason };
    return parseMatrixEvent({
      ...payload.value,
      account: socketAccount.account,
      receivedAt: event.receivedAt,
    });
  },
};
