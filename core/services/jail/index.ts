export { Jail, type JailJob, type JailLimits, type JailOptions, type JailResult } from './jail.js';
export { JailRefused } from '../../api/errors.js';
export { describeSupport, detectJailSupport, type JailSupport } from './support.js';
export type { WorkQuota } from './work-tree.js';
