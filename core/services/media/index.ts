export { ALLOWED_CONTAINERS, inputArgs, pinFileFormat, pinFormat, type MediaFamily, type PinnedFormat } from './format.js';
export { MediaRefused } from '../../api/errors.js';
export { assertPixelBudget, DEFAULT_MAX_IMAGE_PIXELS } from './image-size.js';
export { ffprobeBeside, mediaSeconds } from './duration.js';
