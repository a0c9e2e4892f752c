// The vision path lives in the built-in plugins' tier (the documents plugin sends a scan's pages through it too).
export { askVision, asUpstreamFailure, DEFAULT_ANTHROPIC_VERSION, lacksMessagesEndpoint, visionLegFilter, visionPathOf, type VisionAnswer, type VisionPath, type VisionRequest } from '../../core/builtin.js';
