import { accountKey, credentialSource, need, type AccountRequirements } from "../credentials.ts";
import { MATRIX_ENV, matrixAccounts, type MatrixChannelConfig } from "./config.ts";

/** What each enabled Matrix account needs: the homeserver URL and the bot's access token. */
export function matrixRequirements(root: MatrixChannelConfig): AccountRequirements[] {
  return matrixAccounts(root).map((account) => {
    const source = (field: "homeserver" | "accessToken") =>
      credentialSource("matrix", root, account, field, [MATRIX_ENV[field]]);
    return {
      accountId: account.accountId,
      key: accountKey("matrix", root, account.accountId),
      needs: [
        need("homeserver URL", "the companion cannot sync", source("homeserver")),
        need(
          "access token",
          "the companion cannot sync and replies cannot be sent",
          source("accessToken"),
        ),
      ],
    };
  });
}
