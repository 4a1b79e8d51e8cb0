// Model text loses terminal escapes and control characters through the one sanitiser (util/outsideText).
export { stripControlChars } from '../../util/outsideText';
