/**
 * The built-in target of mail to submitters (autoresponses, confirmations): the destination_id of
 * their deliveries, and the type the claim reports for them (its policy: policy.ts). No
 * destinations row has this id (theirs are prefixed), so it is never disabled or marked failing,
 * and what it sends is read from the form's settings.
 */
export { SUBMITTER_TARGET } from '../../shared/contracts/submitter.js';
