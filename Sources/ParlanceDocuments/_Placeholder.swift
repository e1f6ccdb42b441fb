// Temporary placeholder so the package resolves while this target is written; deleted by the lead.
