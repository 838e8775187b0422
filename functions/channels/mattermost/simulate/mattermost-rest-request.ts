import type { UploadedFile } from "../../../../scripts/simulate/fakes/kit.ts";
import type { MattermostFakeState } from "./mattermost-state.ts";

/** One REST v4 call that passed the token check and the scripted failures, for the route files. */
export interface RestRequest {
  state: MattermostFakeState;
  method: string | undefined;
  /** The path after /api/v4. */
  path: string;
  url: URL;
  body: Record<string, unknown>;
  upload: { fields: Record<string, string>; files: UploadedFile[] } | undefined;
  /** The answer, or a dropped connection when the call was scripted to drop. */
  answer(status: number, value: unknown): void;
  error(status: number, id: string, message: string): void;
}
