"""CKKS and BGV: parameters, keys, encryption and the eager reference evaluator."""

from fhec.schemes.params import BGVParams, CKKSParams, max_log_qp
from fhec.schemes.ciphertext import Ciphertext, Plaintext
from fhec.schemes.keys import KeySet, SwitchingKey, keygen
from fhec.schemes.encryption import decrypt, decrypt_polynomial, encode, encrypt, measure_noise_budget
from fhec.schemes.evaluator import Evaluator
from fhec.schemes.noise import measure_precision

__all__ = [
    "BGVParams", "CKKSParams", "max_log_qp", "Ciphertext", "Plaintext", "KeySet", "SwitchingKey", "keygen",
    "decrypt", "decrypt_polynomial", "encode", "encrypt", "measure_noise_budget", "Evaluator", "measure_precision",
]
