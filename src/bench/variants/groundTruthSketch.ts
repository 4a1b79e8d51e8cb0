// Rambo's retrieval ceiling: the case's ground-truth body given as the sketch, so its elements are
// the ones the answer really uses (an evaluation oracle, never a method a user could run).
import type { GivenSketch } from '../../engine/pipeline';

/** The ground truth as the body mode's sketch. */
export function groundTruthSketch(groundtruth: string): GivenSketch {
  return { source: 'oracle', note: 'no model call: the ORACLE sketch (the ground-truth body)', text: groundtruth };
}
