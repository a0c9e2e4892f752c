// The vision path lives in the core's media entry (the documents plugin sends a scan's pages through it too).
export { askVision, asUpstreamFailure, DEFAULT_ANTHROPIC_VERSION, lacksMessagesEndpoint, visionLegFilter, visionPathOf, visionPaths, type VisionAnswer, type VisionPath, type VisionRequest } from '../../core/media.js';
