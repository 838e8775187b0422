/** Types of workerd-log.mjs (plain JavaScript: local-worker.mjs runs it under plain node). */
export declare function workerdLogFilter(now?: () => number): (line: string) => string | undefined;
