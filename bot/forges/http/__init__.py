"""The request seam every forge adapter sends through (:mod:`.seam`), and the policies it
applies once for all of them: retries (:mod:`.retry`), what an error status means
(:mod:`.errors`) and cutting credentials out of text (:mod:`.redaction`)."""
