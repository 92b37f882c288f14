# Approval of an analysed remediation (the platform CR's aiAnalysis.policy.configMapName, key approval.rego).
# Input: confidence (0..1), threshold (aiAnalysis.confidenceThreshold), needsHumanReview, humanReviewReason,
# environment, businessPriority, criticality, severity, signalName, targetResource, workflow {id, actionType},
# detectedLabels. Output (data.approval): require_approval (boolean) and reasons (strings for the approver).
# This default reproduces the platform's built-in rule: confidence below the threshold, or an investigation that
# asks for human review, needs a person's approval.
package approval

import rego.v1

default require_approval := false

require_approval if input.confidence < input.threshold

require_approval if input.needsHumanReview == true

reasons contains sprintf("confidence %v is below the auto-approval threshold %v", [input.confidence, input.threshold]) if {
	input.confidence < input.threshold
}

reasons contains sprintf("the investigation asks for human review (%v)", [object.get(input, "humanReviewReason", "unspecified")]) if {
	input.needsHumanReview == true
}
