/*
 * acl/acl_base_rt.h: the base helpers of the ACL API that need no device: element types
 * and their sizes, and half-precision numbers. acl/acl_base.h includes it, as CANN's does.
 *
 * Written for this project. The names, values and types match CANN's `acl/acl_base_rt.h`.
 */
#ifndef MEMPOOL_HAL_ACL_ACL_BASE_RT_H
#define MEMPOOL_HAL_ACL_ACL_BASE_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The bits of an IEEE half-precision number. */
typedef uint16_t aclFloat16;

/* Element types of CANN's tensors (values not listed are unused). */
typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
    ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
    ACL_HIFLOAT8 = 34,
    ACL_FLOAT8_E5M2 = 35,
    ACL_FLOAT8_E4M3FN = 36,
    ACL_FLOAT8_E8M0 = 37,
    ACL_FLOAT6_E3M2 = 38,
    ACL_FLOAT6_E2M3 = 39,
    ACL_FLOAT4_E2M1 = 40,
    ACL_FLOAT4_E1M2 = 41,
} aclDataType;

/* The size of one element in bytes: 0 for STRING and UNDEFINED, 8 for a value not listed
 * (the 6- and 4-bit float types included), as CANN answers. */
size_t aclDataTypeSize(aclDataType dataType);
/* Rounded to nearest, ties to even, saturating at +-65504 (infinities and NaN too). */
aclFloat16 aclFloatToFloat16(float value);
/* Exact for finite halves; the top exponent reads as an ordinary one (+Inf is 65536). */
float aclFloat16ToFloat(aclFloat16 value);

#ifdef __cplusplus
}
#endif

#endif /* MEMPOOL_HAL_ACL_ACL_BASE_RT_H */
