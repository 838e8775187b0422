/**
 * A socket simulation can only hand a message over once the companion holds the fake's socket
 * (it connects a moment after dev's ready line, and again after a restart). `attempt` tries once
 * and says whether the fake took the message; this repeats it until `deadline` and then says, in
 * words, what did not happen and where to look.
 */
export async function untilConnected(
  platform: string,
  missing: string,
  deadline: number,
  attempt: () => Promise<boolean>,
): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (await attempt()) return;
    if (Date.now() >= deadline)
      throw new Error(
        `${missing} after ${Math.round((Date.now() - started) / 1000)} s, so the message was not sent: ` +
          `npm run dev starts the companion for ${platform} (unless EDGECLAW_DEV_COMPANION=0); its log in the dev terminal says why it is not connected`,
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
