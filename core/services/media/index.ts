export { ALLOWED_CONTAINERS, inputArgs, MediaRefused, pinFileFormat, pinFormat, type MediaFamily, type PinnedFormat } from './format.js';
export { assertPixelBudget, DEFAULT_MAX_IMAGE_PIXELS } from './image-size.js';
export { ffprobeBeside, mediaSeconds } from './duration.js';
