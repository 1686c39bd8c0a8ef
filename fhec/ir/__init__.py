"""The two intermediate representations of fhec.

`fhec.ir.he` is the HE-level IR (ciphertext operations); `fhec.ir.limb` is the
limb-level IR (one instruction per RNS residue vector, numpy columns), with its
opcodes in `fhec.ir.limb_ops` and its verifier in `fhec.ir.limb_verify`.
Import the submodule you need; this package re-exports nothing so that each IR can
be used without loading the other.
"""
