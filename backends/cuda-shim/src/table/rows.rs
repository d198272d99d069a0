//! The rows of the driver table: every function of the CUDA 13.5 driver API (`cuda.h`, the
//! profiler, OpenGL, EGL and VDPAU interop; not the Windows-only `cuWGLGetDevice`), by base
//! name, each variant with the CUDA version that introduced it and its stream flavour
//! (`default`, `ptds`, `ptsz`), and what this library does with it (`implemented`: a function of
//! [`crate::exports`]; `legacy`: a variant of an implemented call with 32-bit device
//! pointers or sizes; `stub`: a function this library does not implement).
//!
//! Facts of the driver's ABI, written here one row per base name.

driver_table! {
    cuArray3DCreate { cuArray3DCreate 2000 default stub, cuArray3DCreate_v2 3020 default stub }
    cuArray3DGetDescriptor { cuArray3DGetDescriptor 2000 default stub, cuArray3DGetDescriptor_v2 3020 default stub }
    cuArrayCreate { cuArrayCreate 2000 default stub, cuArrayCreate_v2 3020 default stub }
    cuArrayDestroy { cuArrayDestroy 2000 default stub }
    cuArrayGetDescriptor { cuArrayGetDescriptor 2000 default stub, cuArrayGetDescriptor_v2 3020 default stub }
    cuArrayGetMemoryRequirements { cuArrayGetMemoryRequirements 11060 default stub }
    cuArrayGetPlane { cuArrayGetPlane 11020 default stub }
    cuArrayGetSparseProperties { cuArrayGetSparseProperties 11010 default stub }
    cuCheckpointOperationComplete { cuCheckpointOperationComplete 13040 default stub }
    cuCheckpointProcessCheckpoint { cuCheckpointProcessCheckpoint 12080 default stub }
    cuCheckpointProcessGetRestoreThreadId { cuCheckpointProcessGetRestoreThreadId 12080 default stub }
    cuCheckpointProcessGetState { cuCheckpointProcessGetState 12080 default stub }
    cuCheckpointProcessLock { cuCheckpointProcessLock 12080 default stub }
    cuCheckpointProcessRestore { cuCheckpointProcessRestore 12080 default stub }
    cuCheckpointProcessUnlock { cuCheckpointProcessUnlock 12080 default stub }
    cuCoredumpDeregisterCompleteCallback { cuCoredumpDeregisterCompleteCallback 13020 default stub }
    cuCoredumpDeregisterStartCallback { cuCoredumpDeregisterStartCallback 13020 default stub }
    cuCoredumpGetAttribute { cuCoredumpGetAttribute 12010 default stub }
    cuCoredumpGetAttributeGlobal { cuCoredumpGetAttributeGlobal 12010 default stub }
    cuCoredumpRegisterCompleteCallback { cuCoredumpRegisterCompleteCallback 13020 default stub }
    cuCoredumpRegisterStartCallback { cuCoredumpRegisterStartCallback 13020 default stub }
    cuCoredumpSetAttribute { cuCoredumpSetAttribute 12010 default stub }
    cuCoredumpSetAttributeGlobal { cuCoredumpSetAttributeGlobal 12010 default stub }
    cuCtxAttach { cuCtxAttach 2000 default stub }
    cuCtxCreate { cuCtxCreate 2000 default implemented, cuCtxCreate_v2 3020 default implemented, cuCtxCreate_v3 11040 default implemented, cuCtxCreate_v4 12050 default implemented }
    cuCtxDestroy { cuCtxDestroy 2000 default implemented, cuCtxDestroy_v2 4000 default implemented }
    cuCtxDetach { cuCtxDetach 2000 default stub }
    cuCtxDisablePeerAccess { cuCtxDisablePeerAccess 4000 default implemented }
    cuCtxEnablePeerAccess { cuCtxEnablePeerAccess 4000 default implemented }
    cuCtxFromGreenCtx { cuCtxFromGreenCtx 12040 default stub }
    cuCtxGetApiVersion { cuCtxGetApiVersion 3020 default implemented }
    cuCtxGetCacheConfig { cuCtxGetCacheConfig 3020 default stub }
    cuCtxGetCurrent { cuCtxGetCurrent 4000 default implemented }
    cuCtxGetDevResource { cuCtxGetDevResource 12040 default stub }
    cuCtxGetDevice { cuCtxGetDevice 2000 default implemented, cuCtxGetDevice_v2 13000 default implemented }
    cuCtxGetExecAffinity { cuCtxGetExecAffinity 11040 default stub }
    cuCtxGetFlags { cuCtxGetFlags 7000 default implemented }
    cuCtxGetId { cuCtxGetId 12000 default implemented }
    cuCtxGetLimit { cuCtxGetLimit 3010 default stub }
    cuCtxGetSharedMemConfig { cuCtxGetSharedMemConfig 4020 default stub }
    cuCtxGetStreamPriorityRange { cuCtxGetStreamPriorityRange 5050 default implemented }
    cuCtxPopCurrent { cuCtxPopCurrent 2000 default implemented, cuCtxPopCurrent_v2 4000 default implemented }
    cuCtxPushCurrent { cuCtxPushCurrent 2000 default implemented, cuCtxPushCurrent_v2 4000 default implemented }
    cuCtxRecordEvent { cuCtxRecordEvent 12050 default stub }
    cuCtxResetPersistingL2Cache { cuCtxResetPersistingL2Cache 11000 default stub }
    cuCtxSetCacheConfig { cuCtxSetCacheConfig 3020 default stub }
    cuCtxSetCurrent { cuCtxSetCurrent 4000 default implemented }
    cuCtxSetFlags { cuCtxSetFlags 12010 default implemented }
    cuCtxSetLimit { cuCtxSetLimit 3010 default stub }
    cuCtxSetSharedMemConfig { cuCtxSetSharedMemConfig 4020 default stub }
    cuCtxSynchronize { cuCtxSynchronize 2000 default implemented, cuCtxSynchronize_v2 13000 default implemented }
    cuCtxWaitEvent { cuCtxWaitEvent 12050 default stub }
    cuDestroyExternalMemory { cuDestroyExternalMemory 10000 default stub }
    cuDestroyExternalSemaphore { cuDestroyExternalSemaphore 10000 default stub }
    cuDevResourceGenerateDesc { cuDevResourceGenerateDesc 12040 default stub }
    cuDevSmResourceSplit { cuDevSmResourceSplit 13010 default stub }
    cuDevSmResourceSplitByCount { cuDevSmResourceSplitByCount 12040 default stub }
    cuDeviceCanAccessPeer { cuDeviceCanAccessPeer 4000 default implemented }
    cuDeviceComputeCapability { cuDeviceComputeCapability 2000 default stub }
    cuDeviceGet { cuDeviceGet 2000 default implemented }
    cuDeviceGetAttribute { cuDeviceGetAttribute 2000 default implemented }
    cuDeviceGetByPCIBusId { cuDeviceGetByPCIBusId 4010 default implemented }
    cuDeviceGetCliqueCount { cuDeviceGetCliqueCount 13040 default stub }
    cuDeviceGetCliqueInfo { cuDeviceGetCliqueInfo 13040 default stub }
    cuDeviceGetCount { cuDeviceGetCount 2000 default implemented }
    cuDeviceGetDefaultMemPool { cuDeviceGetDefaultMemPool 11020 default implemented }
    cuDeviceGetDevResource { cuDeviceGetDevResource 12040 default stub }
    cuDeviceGetExecAffinitySupport { cuDeviceGetExecAffinitySupport 11040 default stub }
    cuDeviceGetFabricClusterUuid { cuDeviceGetFabricClusterUuid 13040 default stub }
    cuDeviceGetGraphMemAttribute { cuDeviceGetGraphMemAttribute 11040 default stub }
    cuDeviceGetHostAtomicCapabilities { cuDeviceGetHostAtomicCapabilities 13000 default stub }
    cuDeviceGetLuid { cuDeviceGetLuid 10000 default stub }
    cuDeviceGetMemPool { cuDeviceGetMemPool 11020 default implemented }
    cuDeviceGetName { cuDeviceGetName 2000 default implemented }
    cuDeviceGetNvSciSyncAttributes { cuDeviceGetNvSciSyncAttributes 10020 default stub }
    cuDeviceGetP2PAtomicCapabilities { cuDeviceGetP2PAtomicCapabilities 13000 default stub }
    cuDeviceGetP2PAttribute { cuDeviceGetP2PAttribute 8000 default stub }
    cuDeviceGetPCIBusId { cuDeviceGetPCIBusId 4010 default implemented }
    cuDeviceGetProperties { cuDeviceGetProperties 2000 default stub }
    cuDeviceGetTexture1DLinearMaxWidth { cuDeviceGetTexture1DLinearMaxWidth 11010 default stub }
    cuDeviceGetUuid { cuDeviceGetUuid 9020 default implemented, cuDeviceGetUuid_v2 11040 default implemented }
    cuDeviceGraphMemTrim { cuDeviceGraphMemTrim 11040 default stub }
    cuDevicePrimaryCtxGetState { cuDevicePrimaryCtxGetState 7000 default implemented }
    cuDevicePrimaryCtxRelease { cuDevicePrimaryCtxRelease 7000 default implemented, cuDevicePrimaryCtxRelease_v2 11000 default implemented }
    cuDevicePrimaryCtxReset { cuDevicePrimaryCtxReset 7000 default implemented, cuDevicePrimaryCtxReset_v2 11000 default implemented }
    cuDevicePrimaryCtxRetain { cuDevicePrimaryCtxRetain 7000 default implemented }
    cuDevicePrimaryCtxSetFlags { cuDevicePrimaryCtxSetFlags 7000 default implemented, cuDevicePrimaryCtxSetFlags_v2 11000 default implemented }
    cuDeviceRegisterAsyncNotification { cuDeviceRegisterAsyncNotification 12040 default stub }
    cuDeviceSetGraphMemAttribute { cuDeviceSetGraphMemAttribute 11040 default stub }
    cuDeviceSetMemPool { cuDeviceSetMemPool 11020 default implemented }
    cuDeviceTotalMem { cuDeviceTotalMem 2000 default legacy, cuDeviceTotalMem_v2 3020 default implemented }
    cuDeviceUnregisterAsyncNotification { cuDeviceUnregisterAsyncNotification 12040 default stub }
    cuDriverGetVersion { cuDriverGetVersion 2020 default implemented }
    cuEGLStreamConsumerAcquireFrame { cuEGLStreamConsumerAcquireFrame 7000 default stub }
    cuEGLStreamConsumerConnect { cuEGLStreamConsumerConnect 7000 default stub }
    cuEGLStreamConsumerConnectWithFlags { cuEGLStreamConsumerConnectWithFlags 8000 default stub }
    cuEGLStreamConsumerDisconnect { cuEGLStreamConsumerDisconnect 7000 default stub }
    cuEGLStreamConsumerReleaseFrame { cuEGLStreamConsumerReleaseFrame 7000 default stub }
    cuEGLStreamProducerConnect { cuEGLStreamProducerConnect 7000 default stub }
    cuEGLStreamProducerDisconnect { cuEGLStreamProducerDisconnect 7000 default stub }
    cuEGLStreamProducerPresentFrame { cuEGLStreamProducerPresentFrame 7000 default stub }
    cuEGLStreamProducerReturnFrame { cuEGLStreamProducerReturnFrame 7000 default stub }
    cuEventCreate { cuEventCreate 2000 default implemented }
    cuEventCreateFromEGLSync { cuEventCreateFromEGLSync 9000 default stub }
    cuEventDestroy { cuEventDestroy 2000 default implemented, cuEventDestroy_v2 4000 default implemented }
    cuEventElapsedTime { cuEventElapsedTime 2000 default implemented, cuEventElapsedTime_v2 12080 default implemented }
    cuEventQuery { cuEventQuery 2000 default implemented }
    cuEventRecord { cuEventRecord 2000 default implemented, cuEventRecord_ptsz 7000 ptsz implemented }
    cuEventRecordWithFlags { cuEventRecordWithFlags 11010 default implemented, cuEventRecordWithFlags_ptsz 11010 ptsz implemented }
    cuEventSynchronize { cuEventSynchronize 2000 default implemented }
    cuExternalMemoryGetMappedBuffer { cuExternalMemoryGetMappedBuffer 10000 default stub }
    cuExternalMemoryGetMappedMipmappedArray { cuExternalMemoryGetMappedMipmappedArray 10000 default stub }
    cuFabricCpyBatchAsync { cuFabricCpyBatchAsync 13050 default stub, cuFabricCpyBatchAsync_ptsz 13050 ptsz stub }
    cuFlushGPUDirectRDMAWrites { cuFlushGPUDirectRDMAWrites 11030 default stub }
    cuFuncGetAttribute { cuFuncGetAttribute 2020 default stub }
    cuFuncGetModule { cuFuncGetModule 11000 default stub }
    cuFuncGetName { cuFuncGetName 12030 default stub }
    cuFuncGetParamCount { cuFuncGetParamCount 13020 default stub }
    cuFuncGetParamInfo { cuFuncGetParamInfo 12040 default stub }
    cuFuncIsLoaded { cuFuncIsLoaded 12040 default stub }
    cuFuncLoad { cuFuncLoad 12040 default stub }
    cuFuncSetAttribute { cuFuncSetAttribute 9000 default stub }
    cuFuncSetBlockShape { cuFuncSetBlockShape 2000 default stub }
    cuFuncSetCacheConfig { cuFuncSetCacheConfig 3000 default stub }
    cuFuncSetSharedMemConfig { cuFuncSetSharedMemConfig 4020 default stub }
    cuFuncSetSharedSize { cuFuncSetSharedSize 2000 default stub }
    cuGLCtxCreate { cuGLCtxCreate 2000 default stub, cuGLCtxCreate_v2 3020 default stub }
    cuGLGetDevices { cuGLGetDevices 4010 default stub, cuGLGetDevices_v2 6050 default stub }
    cuGLInit { cuGLInit 2000 default stub }
    cuGLMapBufferObject { cuGLMapBufferObject 2000 default stub, cuGLMapBufferObject_v2 3020 default stub, cuGLMapBufferObject_v2_ptds 7000 ptds stub }
    cuGLMapBufferObjectAsync { cuGLMapBufferObjectAsync 2030 default stub, cuGLMapBufferObjectAsync_v2 3020 default stub, cuGLMapBufferObjectAsync_v2_ptsz 7000 ptsz stub }
    cuGLRegisterBufferObject { cuGLRegisterBufferObject 2000 default stub }
    cuGLSetBufferObjectMapFlags { cuGLSetBufferObjectMapFlags 2030 default stub }
    cuGLUnmapBufferObject { cuGLUnmapBufferObject 2000 default stub }
    cuGLUnmapBufferObjectAsync { cuGLUnmapBufferObjectAsync 2030 default stub }
    cuGLUnregisterBufferObject { cuGLUnregisterBufferObject 2000 default stub }
    cuGetErrorName { cuGetErrorName 6000 default implemented }
    cuGetErrorString { cuGetErrorString 6000 default implemented }
    cuGetExportTable { cuGetExportTable 3000 default implemented }
    cuGetProcAddress { cuGetProcAddress 11030 default implemented, cuGetProcAddress_v2 12000 default implemented }
    cuGraphAddBatchMemOpNode { cuGraphAddBatchMemOpNode 11070 default stub }
    cuGraphAddChildGraphNode { cuGraphAddChildGraphNode 10000 default stub }
    cuGraphAddDependencies { cuGraphAddDependencies 10000 default stub, cuGraphAddDependencies_v2 12030 default stub }
    cuGraphAddEmptyNode { cuGraphAddEmptyNode 10000 default stub }
    cuGraphAddEventRecordNode { cuGraphAddEventRecordNode 11010 default stub }
    cuGraphAddEventWaitNode { cuGraphAddEventWaitNode 11010 default stub }
    cuGraphAddExternalSemaphoresSignalNode { cuGraphAddExternalSemaphoresSignalNode 11020 default stub }
    cuGraphAddExternalSemaphoresWaitNode { cuGraphAddExternalSemaphoresWaitNode 11020 default stub }
    cuGraphAddHostNode { cuGraphAddHostNode 10000 default stub }
    cuGraphAddKernelNode { cuGraphAddKernelNode 10000 default stub, cuGraphAddKernelNode_v2 12000 default stub }
    cuGraphAddMemAllocNode { cuGraphAddMemAllocNode 11040 default stub }
    cuGraphAddMemFreeNode { cuGraphAddMemFreeNode 11040 default stub }
    cuGraphAddMemcpyNode { cuGraphAddMemcpyNode 10000 default stub }
    cuGraphAddMemsetNode { cuGraphAddMemsetNode 10000 default stub }
    cuGraphAddNode { cuGraphAddNode 12020 default stub, cuGraphAddNode_v2 12030 default stub, cuGraphAddNode_v3 13040 default stub }
    cuGraphBatchMemOpNodeGetParams { cuGraphBatchMemOpNodeGetParams 11070 default stub }
    cuGraphBatchMemOpNodeSetParams { cuGraphBatchMemOpNodeSetParams 11070 default stub }
    cuGraphChildGraphNodeGetGraph { cuGraphChildGraphNodeGetGraph 10000 default stub }
    cuGraphClone { cuGraphClone 10000 default stub }
    cuGraphConditionalHandleCreate { cuGraphConditionalHandleCreate 12030 default stub }
    cuGraphCreate { cuGraphCreate 10000 default stub }
    cuGraphDebugDotPrint { cuGraphDebugDotPrint 11030 default stub }
    cuGraphDestroy { cuGraphDestroy 10000 default stub }
    cuGraphDestroyNode { cuGraphDestroyNode 10000 default stub }
    cuGraphEventRecordNodeGetEvent { cuGraphEventRecordNodeGetEvent 11010 default stub }
    cuGraphEventRecordNodeSetEvent { cuGraphEventRecordNodeSetEvent 11010 default stub }
    cuGraphEventWaitNodeGetEvent { cuGraphEventWaitNodeGetEvent 11010 default stub }
    cuGraphEventWaitNodeSetEvent { cuGraphEventWaitNodeSetEvent 11010 default stub }
    cuGraphExecBatchMemOpNodeSetParams { cuGraphExecBatchMemOpNodeSetParams 11070 default stub }
    cuGraphExecChildGraphNodeSetParams { cuGraphExecChildGraphNodeSetParams 11010 default stub }
    cuGraphExecDestroy { cuGraphExecDestroy 10000 default stub }
    cuGraphExecEventRecordNodeSetEvent { cuGraphExecEventRecordNodeSetEvent 11010 default stub }
    cuGraphExecEventWaitNodeSetEvent { cuGraphExecEventWaitNodeSetEvent 11010 default stub }
    cuGraphExecExternalSemaphoresSignalNodeSetParams { cuGraphExecExternalSemaphoresSignalNodeSetParams 11020 default stub }
    cuGraphExecExternalSemaphoresWaitNodeSetParams { cuGraphExecExternalSemaphoresWaitNodeSetParams 11020 default stub }
    cuGraphExecGetFlags { cuGraphExecGetFlags 12000 default stub }
    cuGraphExecGetId { cuGraphExecGetId 13010 default stub }
    cuGraphExecHostNodeSetParams { cuGraphExecHostNodeSetParams 10020 default stub }
    cuGraphExecKernelNodeSetParams { cuGraphExecKernelNodeSetParams 10010 default stub, cuGraphExecKernelNodeSetParams_v2 12000 default stub }
    cuGraphExecMemcpyNodeSetParams { cuGraphExecMemcpyNodeSetParams 10020 default stub }
    cuGraphExecMemsetNodeSetParams { cuGraphExecMemsetNodeSetParams 10020 default stub }
    cuGraphExecNodeSetParams { cuGraphExecNodeSetParams 12020 default stub }
    cuGraphExecUpdate { cuGraphExecUpdate 10020 default stub, cuGraphExecUpdate_v2 12000 default stub }
    cuGraphExternalSemaphoresSignalNodeGetParams { cuGraphExternalSemaphoresSignalNodeGetParams 11020 default stub }
    cuGraphExternalSemaphoresSignalNodeSetParams { cuGraphExternalSemaphoresSignalNodeSetParams 11020 default stub }
    cuGraphExternalSemaphoresWaitNodeGetParams { cuGraphExternalSemaphoresWaitNodeGetParams 11020 default stub }
    cuGraphExternalSemaphoresWaitNodeSetParams { cuGraphExternalSemaphoresWaitNodeSetParams 11020 default stub }
    cuGraphGetEdges { cuGraphGetEdges 10000 default stub, cuGraphGetEdges_v2 12030 default stub }
    cuGraphGetId { cuGraphGetId 13010 default stub }
    cuGraphGetNodes { cuGraphGetNodes 10000 default stub }
    cuGraphGetRootNodes { cuGraphGetRootNodes 10000 default stub }
    cuGraphHostNodeGetParams { cuGraphHostNodeGetParams 10000 default stub }
    cuGraphHostNodeSetParams { cuGraphHostNodeSetParams 10000 default stub }
    cuGraphInstantiate { cuGraphInstantiate 10000 default stub, cuGraphInstantiate_v2 11000 default stub }
    cuGraphInstantiateWithFlags { cuGraphInstantiateWithFlags 11040 default stub }
    cuGraphInstantiateWithParams { cuGraphInstantiateWithParams 12000 default stub, cuGraphInstantiateWithParams_ptsz 12000 ptsz stub }
    cuGraphKernelNodeCopyAttributes { cuGraphKernelNodeCopyAttributes 11000 default stub }
    cuGraphKernelNodeGetAttribute { cuGraphKernelNodeGetAttribute 11000 default stub }
    cuGraphKernelNodeGetParams { cuGraphKernelNodeGetParams 10000 default stub, cuGraphKernelNodeGetParams_v2 12000 default stub }
    cuGraphKernelNodeSetAttribute { cuGraphKernelNodeSetAttribute 11000 default stub }
    cuGraphKernelNodeSetParams { cuGraphKernelNodeSetParams 10000 default stub, cuGraphKernelNodeSetParams_v2 12000 default stub }
    cuGraphLaunch { cuGraphLaunch 10000 default stub, cuGraphLaunch_ptsz 10000 ptsz stub }
    cuGraphMemAllocNodeGetParams { cuGraphMemAllocNodeGetParams 11040 default stub }
    cuGraphMemFreeNodeGetParams { cuGraphMemFreeNodeGetParams 11040 default stub }
    cuGraphMemcpyNodeGetParams { cuGraphMemcpyNodeGetParams 10000 default stub }
    cuGraphMemcpyNodeSetParams { cuGraphMemcpyNodeSetParams 10000 default stub }
    cuGraphMemsetNodeGetParams { cuGraphMemsetNodeGetParams 10000 default stub }
    cuGraphMemsetNodeSetParams { cuGraphMemsetNodeSetParams 10000 default stub }
    cuGraphNodeFindInClone { cuGraphNodeFindInClone 10000 default stub }
    cuGraphNodeGetContainingGraph { cuGraphNodeGetContainingGraph 13010 default stub }
    cuGraphNodeGetDependencies { cuGraphNodeGetDependencies 10000 default stub, cuGraphNodeGetDependencies_v2 12030 default stub }
    cuGraphNodeGetDependentNodes { cuGraphNodeGetDependentNodes 10000 default stub, cuGraphNodeGetDependentNodes_v2 12030 default stub }
    cuGraphNodeGetEnabled { cuGraphNodeGetEnabled 11060 default stub }
    cuGraphNodeGetLocalId { cuGraphNodeGetLocalId 13010 default stub }
    cuGraphNodeGetParams { cuGraphNodeGetParams 13020 default stub }
    cuGraphNodeGetToolsId { cuGraphNodeGetToolsId 13010 default stub }
    cuGraphNodeGetType { cuGraphNodeGetType 10000 default stub }
    cuGraphNodeSetEnabled { cuGraphNodeSetEnabled 11060 default stub }
    cuGraphNodeSetParams { cuGraphNodeSetParams 12020 default stub, cuGraphNodeSetParams_v2 13040 default stub }
    cuGraphReleaseUserObject { cuGraphReleaseUserObject 11030 default stub }
    cuGraphRemoveDependencies { cuGraphRemoveDependencies 10000 default stub, cuGraphRemoveDependencies_v2 12030 default stub }
    cuGraphRetainUserObject { cuGraphRetainUserObject 11030 default stub }
    cuGraphUpload { cuGraphUpload 11010 default stub, cuGraphUpload_ptsz 11010 ptsz stub }
    cuGraphicsEGLRegisterImage { cuGraphicsEGLRegisterImage 7000 default stub }
    cuGraphicsGLRegisterBuffer { cuGraphicsGLRegisterBuffer 3000 default stub }
    cuGraphicsGLRegisterImage { cuGraphicsGLRegisterImage 3000 default stub }
    cuGraphicsMapResources { cuGraphicsMapResources 3000 default stub, cuGraphicsMapResources_ptsz 7000 ptsz stub }
    cuGraphicsResourceGetMappedEglFrame { cuGraphicsResourceGetMappedEglFrame 7000 default stub }
    cuGraphicsResourceGetMappedMipmappedArray { cuGraphicsResourceGetMappedMipmappedArray 5000 default stub }
    cuGraphicsResourceGetMappedPointer { cuGraphicsResourceGetMappedPointer 3000 default stub, cuGraphicsResourceGetMappedPointer_v2 3020 default stub }
    cuGraphicsResourceSetMapFlags { cuGraphicsResourceSetMapFlags 3000 default stub, cuGraphicsResourceSetMapFlags_v2 6050 default stub }
    cuGraphicsSubResourceGetMappedArray { cuGraphicsSubResourceGetMappedArray 3000 default stub }
    cuGraphicsUnmapResources { cuGraphicsUnmapResources 3000 default stub, cuGraphicsUnmapResources_ptsz 7000 ptsz stub }
    cuGraphicsUnregisterResource { cuGraphicsUnregisterResource 3000 default stub }
    cuGraphicsVDPAURegisterOutputSurface { cuGraphicsVDPAURegisterOutputSurface 3010 default stub }
    cuGraphicsVDPAURegisterVideoSurface { cuGraphicsVDPAURegisterVideoSurface 3010 default stub }
    cuGreenCtxCreate { cuGreenCtxCreate 12040 default stub }
    cuGreenCtxDestroy { cuGreenCtxDestroy 12040 default stub }
    cuGreenCtxGetDevResource { cuGreenCtxGetDevResource 12040 default stub }
    cuGreenCtxGetId { cuGreenCtxGetId 12090 default stub }
    cuGreenCtxRecordEvent { cuGreenCtxRecordEvent 12040 default stub }
    cuGreenCtxStreamCreate { cuGreenCtxStreamCreate 12050 default stub }
    cuGreenCtxWaitEvent { cuGreenCtxWaitEvent 12040 default stub }
    cuImportExternalMemory { cuImportExternalMemory 10000 default stub }
    cuImportExternalSemaphore { cuImportExternalSemaphore 10000 default stub }
    cuInit { cuInit 2000 default implemented }
    cuIpcCloseMemHandle { cuIpcCloseMemHandle 4010 default stub }
    cuIpcGetEventHandle { cuIpcGetEventHandle 4010 default stub }
    cuIpcGetMemHandle { cuIpcGetMemHandle 4010 default stub }
    cuIpcOpenEventHandle { cuIpcOpenEventHandle 4010 default stub }
    cuIpcOpenMemHandle { cuIpcOpenMemHandle 4010 default stub, cuIpcOpenMemHandle_v2 11000 default stub }
    cuKernelGetAttribute { cuKernelGetAttribute 12000 default stub }
    cuKernelGetFunction { cuKernelGetFunction 12000 default stub }
    cuKernelGetLibrary { cuKernelGetLibrary 12050 default stub }
    cuKernelGetName { cuKernelGetName 12030 default stub }
    cuKernelGetParamCount { cuKernelGetParamCount 13020 default stub }
    cuKernelGetParamInfo { cuKernelGetParamInfo 12040 default stub }
    cuKernelSetAttribute { cuKernelSetAttribute 12000 default stub }
    cuKernelSetCacheConfig { cuKernelSetCacheConfig 12000 default stub }
    cuLaunch { cuLaunch 2000 default stub }
    cuLaunchCooperativeKernel { cuLaunchCooperativeKernel 9000 default stub, cuLaunchCooperativeKernel_ptsz 9000 ptsz stub }
    cuLaunchCooperativeKernelMultiDevice { cuLaunchCooperativeKernelMultiDevice 9000 default stub }
    cuLaunchGrid { cuLaunchGrid 2000 default stub }
    cuLaunchGridAsync { cuLaunchGridAsync 2000 default stub }
    cuLaunchHostFunc { cuLaunchHostFunc 10000 default implemented, cuLaunchHostFunc_v2 13010 default implemented, cuLaunchHostFunc_ptsz 10000 ptsz implemented, cuLaunchHostFunc_v2_ptsz 13010 ptsz implemented }
    cuLaunchKernel { cuLaunchKernel 4000 default stub, cuLaunchKernel_ptsz 7000 ptsz stub }
    cuLaunchKernelEx { cuLaunchKernelEx 11060 default stub, cuLaunchKernelEx_ptsz 11060 ptsz stub }
    cuLibraryEnumerateKernels { cuLibraryEnumerateKernels 12040 default stub }
    cuLibraryGetGlobal { cuLibraryGetGlobal 12000 default stub }
    cuLibraryGetKernel { cuLibraryGetKernel 12000 default stub }
    cuLibraryGetKernelCount { cuLibraryGetKernelCount 12040 default stub }
    cuLibraryGetManaged { cuLibraryGetManaged 12000 default stub }
    cuLibraryGetModule { cuLibraryGetModule 12000 default stub }
    cuLibraryGetUnifiedFunction { cuLibraryGetUnifiedFunction 12000 default stub }
    cuLibraryLoadData { cuLibraryLoadData 12000 default stub }
    cuLibraryLoadFromFile { cuLibraryLoadFromFile 12000 default stub }
    cuLibraryUnload { cuLibraryUnload 12000 default stub }
    cuLinkAddData { cuLinkAddData 5050 default stub, cuLinkAddData_v2 6050 default stub }
    cuLinkAddFile { cuLinkAddFile 5050 default stub, cuLinkAddFile_v2 6050 default stub }
    cuLinkComplete { cuLinkComplete 5050 default stub }
    cuLinkCreate { cuLinkCreate 5050 default stub, cuLinkCreate_v2 6050 default stub }
    cuLinkDestroy { cuLinkDestroy 5050 default stub }
    cuLogicalEndpointAddDevice { cuLogicalEndpointAddDevice 13030 default stub }
    cuLogicalEndpointBindAddr { cuLogicalEndpointBindAddr 13030 default stub }
    cuLogicalEndpointBindMem { cuLogicalEndpointBindMem 13030 default stub }
    cuLogicalEndpointCreate { cuLogicalEndpointCreate 13030 default stub }
    cuLogicalEndpointDestroy { cuLogicalEndpointDestroy 13030 default stub }
    cuLogicalEndpointExport { cuLogicalEndpointExport 13030 default stub }
    cuLogicalEndpointGetLimits { cuLogicalEndpointGetLimits 13030 default stub }
    cuLogicalEndpointIdRelease { cuLogicalEndpointIdRelease 13030 default stub }
    cuLogicalEndpointIdReserve { cuLogicalEndpointIdReserve 13030 default stub }
    cuLogicalEndpointImport { cuLogicalEndpointImport 13030 default stub }
    cuLogicalEndpointQuery { cuLogicalEndpointQuery 13030 default stub }
    cuLogicalEndpointUnbind { cuLogicalEndpointUnbind 13030 default stub }
    cuLogsCurrent { cuLogsCurrent 12090 default stub }
    cuLogsDumpToFile { cuLogsDumpToFile 12090 default stub }
    cuLogsDumpToMemory { cuLogsDumpToMemory 12090 default stub }
    cuLogsRegisterCallback { cuLogsRegisterCallback 12090 default stub }
    cuLogsUnregisterCallback { cuLogsUnregisterCallback 12090 default stub }
    cuMemAddressFree { cuMemAddressFree 10020 default implemented }
    cuMemAddressReserve { cuMemAddressReserve 10020 default implemented }
    cuMemAdvise { cuMemAdvise 8000 default stub, cuMemAdvise_v2 12020 default stub }
    cuMemAlloc { cuMemAlloc 2000 default legacy, cuMemAlloc_v2 3020 default implemented }
    cuMemAllocAsync { cuMemAllocAsync 11020 default implemented, cuMemAllocAsync_ptsz 11020 ptsz implemented }
    cuMemAllocFromPoolAsync { cuMemAllocFromPoolAsync 11020 default implemented, cuMemAllocFromPoolAsync_ptsz 11020 ptsz implemented }
    cuMemAllocHost { cuMemAllocHost 2000 default legacy, cuMemAllocHost_v2 3020 default implemented }
    cuMemAllocManaged { cuMemAllocManaged 6000 default stub }
    cuMemAllocPitch { cuMemAllocPitch 2000 default stub, cuMemAllocPitch_v2 3020 default stub }
    cuMemBatchDecompressAsync { cuMemBatchDecompressAsync 12060 default stub, cuMemBatchDecompressAsync_ptsz 12060 ptsz stub }
    cuMemCreate { cuMemCreate 10020 default implemented }
    cuMemDiscardAndPrefetchBatchAsync { cuMemDiscardAndPrefetchBatchAsync 13000 default stub, cuMemDiscardAndPrefetchBatchAsync_ptsz 13000 ptsz stub }
    cuMemDiscardBatchAsync { cuMemDiscardBatchAsync 13000 default stub, cuMemDiscardBatchAsync_ptsz 13000 ptsz stub }
    cuMemExportToShareableHandle { cuMemExportToShareableHandle 10020 default stub }
    cuMemFree { cuMemFree 2000 default legacy, cuMemFree_v2 3020 default implemented }
    cuMemFreeAsync { cuMemFreeAsync 11020 default implemented, cuMemFreeAsync_ptsz 11020 ptsz implemented }
    cuMemFreeHost { cuMemFreeHost 2000 default implemented }
    cuMemGetAccess { cuMemGetAccess 10020 default implemented }
    cuMemGetAddressRange { cuMemGetAddressRange 2000 default legacy, cuMemGetAddressRange_v2 3020 default implemented }
    cuMemGetAllocationGranularity { cuMemGetAllocationGranularity 10020 default implemented }
    cuMemGetAllocationPropertiesFromHandle { cuMemGetAllocationPropertiesFromHandle 10020 default implemented }
    cuMemGetDefaultMemPool { cuMemGetDefaultMemPool 13000 default stub }
    cuMemGetHandleForAddressRange { cuMemGetHandleForAddressRange 11070 default stub }
    cuMemGetInfo { cuMemGetInfo 2000 default legacy, cuMemGetInfo_v2 3020 default implemented }
    cuMemGetLocationInfo { cuMemGetLocationInfo 13040 default stub }
    cuMemGetMemPool { cuMemGetMemPool 13000 default stub }
    cuMemHostAlloc { cuMemHostAlloc 2020 default implemented }
    cuMemHostGetDevicePointer { cuMemHostGetDevicePointer 2020 default legacy, cuMemHostGetDevicePointer_v2 3020 default implemented }
    cuMemHostGetFlags { cuMemHostGetFlags 2030 default stub }
    cuMemHostRegister { cuMemHostRegister 4000 default implemented, cuMemHostRegister_v2 6050 default implemented }
    cuMemHostUnregister { cuMemHostUnregister 4000 default implemented }
    cuMemImportFromShareableHandle { cuMemImportFromShareableHandle 10020 default stub }
    cuMemMap { cuMemMap 10020 default implemented }
    cuMemMapArrayAsync { cuMemMapArrayAsync 11010 default stub, cuMemMapArrayAsync_ptsz 11010 ptsz stub }
    cuMemPoolCreate { cuMemPoolCreate 11020 default implemented }
    cuMemPoolDestroy { cuMemPoolDestroy 11020 default implemented }
    cuMemPoolExportPointer { cuMemPoolExportPointer 11020 default stub }
    cuMemPoolExportToShareableHandle { cuMemPoolExportToShareableHandle 11020 default stub }
    cuMemPoolGetAccess { cuMemPoolGetAccess 11020 default implemented }
    cuMemPoolGetAttribute { cuMemPoolGetAttribute 11020 default implemented }
    cuMemPoolImportFromShareableHandle { cuMemPoolImportFromShareableHandle 11020 default stub }
    cuMemPoolImportPointer { cuMemPoolImportPointer 11020 default stub }
    cuMemPoolSetAccess { cuMemPoolSetAccess 11020 default implemented }
    cuMemPoolSetAttribute { cuMemPoolSetAttribute 11020 default implemented }
    cuMemPoolTrimTo { cuMemPoolTrimTo 11020 default implemented }
    cuMemPrefetchAsync { cuMemPrefetchAsync 8000 default stub, cuMemPrefetchAsync_v2 12020 default stub, cuMemPrefetchAsync_ptsz 8000 ptsz stub, cuMemPrefetchAsync_v2_ptsz 12020 ptsz stub }
    cuMemPrefetchBatchAsync { cuMemPrefetchBatchAsync 13000 default stub, cuMemPrefetchBatchAsync_ptsz 13000 ptsz stub }
    cuMemRangeGetAttribute { cuMemRangeGetAttribute 8000 default stub }
    cuMemRangeGetAttributes { cuMemRangeGetAttributes 8000 default stub }
    cuMemRelease { cuMemRelease 10020 default implemented }
    cuMemRetainAllocationHandle { cuMemRetainAllocationHandle 11000 default implemented }
    cuMemSetAccess { cuMemSetAccess 10020 default implemented }
    cuMemSetMemPool { cuMemSetMemPool 13000 default stub }
    cuMemUnmap { cuMemUnmap 10020 default implemented }
    cuMemcpy { cuMemcpy 4000 default implemented, cuMemcpy_ptds 7000 ptds implemented }
    cuMemcpy2D { cuMemcpy2D 2000 default stub, cuMemcpy2D_v2 3020 default stub, cuMemcpy2D_v2_ptds 7000 ptds stub }
    cuMemcpy2DAsync { cuMemcpy2DAsync 2000 default stub, cuMemcpy2DAsync_v2 3020 default stub, cuMemcpy2DAsync_v2_ptsz 7000 ptsz stub }
    cuMemcpy2DUnaligned { cuMemcpy2DUnaligned 2000 default stub, cuMemcpy2DUnaligned_v2 3020 default stub, cuMemcpy2DUnaligned_v2_ptds 7000 ptds stub }
    cuMemcpy3D { cuMemcpy3D 2000 default stub, cuMemcpy3D_v2 3020 default stub, cuMemcpy3D_v2_ptds 7000 ptds stub }
    cuMemcpy3DAsync { cuMemcpy3DAsync 2000 default stub, cuMemcpy3DAsync_v2 3020 default stub, cuMemcpy3DAsync_v2_ptsz 7000 ptsz stub }
    cuMemcpy3DBatchAsync { cuMemcpy3DBatchAsync 12080 default stub, cuMemcpy3DBatchAsync_v2 13000 default stub, cuMemcpy3DBatchAsync_ptsz 12080 ptsz stub, cuMemcpy3DBatchAsync_v2_ptsz 13000 ptsz stub }
    cuMemcpy3DPeer { cuMemcpy3DPeer 4000 default stub, cuMemcpy3DPeer_ptds 7000 ptds stub }
    cuMemcpy3DPeerAsync { cuMemcpy3DPeerAsync 4000 default stub, cuMemcpy3DPeerAsync_ptsz 7000 ptsz stub }
    cuMemcpy3DWithAttributesAsync { cuMemcpy3DWithAttributesAsync 13020 default stub, cuMemcpy3DWithAttributesAsync_ptsz 13020 ptsz stub }
    cuMemcpyAsync { cuMemcpyAsync 4000 default implemented, cuMemcpyAsync_ptsz 7000 ptsz implemented }
    cuMemcpyAtoA { cuMemcpyAtoA 2000 default stub, cuMemcpyAtoA_v2 3020 default stub, cuMemcpyAtoA_v2_ptds 7000 ptds stub }
    cuMemcpyAtoD { cuMemcpyAtoD 2000 default stub, cuMemcpyAtoD_v2 3020 default stub, cuMemcpyAtoD_v2_ptds 7000 ptds stub }
    cuMemcpyAtoH { cuMemcpyAtoH 2000 default stub, cuMemcpyAtoH_v2 3020 default stub, cuMemcpyAtoH_v2_ptds 7000 ptds stub }
    cuMemcpyAtoHAsync { cuMemcpyAtoHAsync 2000 default stub, cuMemcpyAtoHAsync_v2 3020 default stub, cuMemcpyAtoHAsync_v2_ptsz 7000 ptsz stub }
    cuMemcpyBatchAsync { cuMemcpyBatchAsync 12080 default stub, cuMemcpyBatchAsync_v2 13000 default stub, cuMemcpyBatchAsync_ptsz 12080 ptsz stub, cuMemcpyBatchAsync_v2_ptsz 13000 ptsz stub }
    cuMemcpyDtoA { cuMemcpyDtoA 2000 default stub, cuMemcpyDtoA_v2 3020 default stub, cuMemcpyDtoA_v2_ptds 7000 ptds stub }
    cuMemcpyDtoD { cuMemcpyDtoD 2000 default legacy, cuMemcpyDtoD_v2 3020 default implemented, cuMemcpyDtoD_v2_ptds 7000 ptds implemented }
    cuMemcpyDtoDAsync { cuMemcpyDtoDAsync 3000 default legacy, cuMemcpyDtoDAsync_v2 3020 default implemented, cuMemcpyDtoDAsync_v2_ptsz 7000 ptsz implemented }
    cuMemcpyDtoH { cuMemcpyDtoH 2000 default legacy, cuMemcpyDtoH_v2 3020 default implemented, cuMemcpyDtoH_v2_ptds 7000 ptds implemented }
    cuMemcpyDtoHAsync { cuMemcpyDtoHAsync 2000 default legacy, cuMemcpyDtoHAsync_v2 3020 default implemented, cuMemcpyDtoHAsync_v2_ptsz 7000 ptsz implemented }
    cuMemcpyHtoA { cuMemcpyHtoA 2000 default stub, cuMemcpyHtoA_v2 3020 default stub, cuMemcpyHtoA_v2_ptds 7000 ptds stub }
    cuMemcpyHtoAAsync { cuMemcpyHtoAAsync 2000 default stub, cuMemcpyHtoAAsync_v2 3020 default stub, cuMemcpyHtoAAsync_v2_ptsz 7000 ptsz stub }
    cuMemcpyHtoD { cuMemcpyHtoD 2000 default legacy, cuMemcpyHtoD_v2 3020 default implemented, cuMemcpyHtoD_v2_ptds 7000 ptds implemented }
    cuMemcpyHtoDAsync { cuMemcpyHtoDAsync 2000 default legacy, cuMemcpyHtoDAsync_v2 3020 default implemented, cuMemcpyHtoDAsync_v2_ptsz 7000 ptsz implemented }
    cuMemcpyPeer { cuMemcpyPeer 4000 default stub, cuMemcpyPeer_ptds 7000 ptds stub }
    cuMemcpyPeerAsync { cuMemcpyPeerAsync 4000 default stub, cuMemcpyPeerAsync_ptsz 7000 ptsz stub }
    cuMemcpyWithAttributesAsync { cuMemcpyWithAttributesAsync 13020 default stub, cuMemcpyWithAttributesAsync_ptsz 13020 ptsz stub }
    cuMemsetD16 { cuMemsetD16 2000 default legacy, cuMemsetD16_v2 3020 default implemented, cuMemsetD16_v2_ptds 7000 ptds implemented }
    cuMemsetD16Async { cuMemsetD16Async 3020 default implemented, cuMemsetD16Async_ptsz 7000 ptsz implemented }
    cuMemsetD2D16 { cuMemsetD2D16 2000 default stub, cuMemsetD2D16_v2 3020 default stub, cuMemsetD2D16_v2_ptds 7000 ptds stub }
    cuMemsetD2D16Async { cuMemsetD2D16Async 3020 default stub, cuMemsetD2D16Async_ptsz 7000 ptsz stub }
    cuMemsetD2D32 { cuMemsetD2D32 2000 default stub, cuMemsetD2D32_v2 3020 default stub, cuMemsetD2D32_v2_ptds 7000 ptds stub }
    cuMemsetD2D32Async { cuMemsetD2D32Async 3020 default stub, cuMemsetD2D32Async_ptsz 7000 ptsz stub }
    cuMemsetD2D8 { cuMemsetD2D8 2000 default stub, cuMemsetD2D8_v2 3020 default stub, cuMemsetD2D8_v2_ptds 7000 ptds stub }
    cuMemsetD2D8Async { cuMemsetD2D8Async 3020 default stub, cuMemsetD2D8Async_ptsz 7000 ptsz stub }
    cuMemsetD32 { cuMemsetD32 2000 default legacy, cuMemsetD32_v2 3020 default implemented, cuMemsetD32_v2_ptds 7000 ptds implemented }
    cuMemsetD32Async { cuMemsetD32Async 3020 default implemented, cuMemsetD32Async_ptsz 7000 ptsz implemented }
    cuMemsetD8 { cuMemsetD8 2000 default legacy, cuMemsetD8_v2 3020 default implemented, cuMemsetD8_v2_ptds 7000 ptds implemented }
    cuMemsetD8Async { cuMemsetD8Async 3020 default implemented, cuMemsetD8Async_ptsz 7000 ptsz implemented }
    cuMipmappedArrayCreate { cuMipmappedArrayCreate 5000 default stub }
    cuMipmappedArrayDestroy { cuMipmappedArrayDestroy 5000 default stub }
    cuMipmappedArrayGetLevel { cuMipmappedArrayGetLevel 5000 default stub }
    cuMipmappedArrayGetMemoryRequirements { cuMipmappedArrayGetMemoryRequirements 11060 default stub }
    cuMipmappedArrayGetSparseProperties { cuMipmappedArrayGetSparseProperties 11010 default stub }
    cuModuleEnumerateFunctions { cuModuleEnumerateFunctions 12040 default stub }
    cuModuleGetFunction { cuModuleGetFunction 2000 default stub }
    cuModuleGetFunctionCount { cuModuleGetFunctionCount 12040 default stub }
    cuModuleGetGlobal { cuModuleGetGlobal 2000 default stub, cuModuleGetGlobal_v2 3020 default stub }
    cuModuleGetLoadingMode { cuModuleGetLoadingMode 11070 default stub }
    cuModuleGetSurfRef { cuModuleGetSurfRef 3000 default stub }
    cuModuleGetTexRef { cuModuleGetTexRef 2000 default stub }
    cuModuleLoad { cuModuleLoad 2000 default stub }
    cuModuleLoadData { cuModuleLoadData 2000 default stub }
    cuModuleLoadDataEx { cuModuleLoadDataEx 2010 default stub }
    cuModuleLoadFatBinary { cuModuleLoadFatBinary 2000 default stub }
    cuModuleUnload { cuModuleUnload 2000 default stub }
    cuMulticastAddDevice { cuMulticastAddDevice 12010 default stub }
    cuMulticastBindAddr { cuMulticastBindAddr 12010 default stub, cuMulticastBindAddr_v2 13010 default stub }
    cuMulticastBindMem { cuMulticastBindMem 12010 default stub, cuMulticastBindMem_v2 13010 default stub }
    cuMulticastCreate { cuMulticastCreate 12010 default stub }
    cuMulticastGetGranularity { cuMulticastGetGranularity 12010 default stub }
    cuMulticastUnbind { cuMulticastUnbind 12010 default stub }
    cuOccupancyAvailableDynamicSMemPerBlock { cuOccupancyAvailableDynamicSMemPerBlock 10020 default stub }
    cuOccupancyMaxActiveBlocksPerMultiprocessor { cuOccupancyMaxActiveBlocksPerMultiprocessor 6050 default stub }
    cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags { cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags 7000 default stub }
    cuOccupancyMaxActiveClusters { cuOccupancyMaxActiveClusters 11070 default stub }
    cuOccupancyMaxPotentialBlockSize { cuOccupancyMaxPotentialBlockSize 6050 default stub }
    cuOccupancyMaxPotentialBlockSizeWithFlags { cuOccupancyMaxPotentialBlockSizeWithFlags 7000 default stub }
    cuOccupancyMaxPotentialClusterSize { cuOccupancyMaxPotentialClusterSize 11070 default stub }
    cuParamSetSize { cuParamSetSize 2000 default stub }
    cuParamSetTexRef { cuParamSetTexRef 2000 default stub }
    cuParamSetf { cuParamSetf 2000 default stub }
    cuParamSeti { cuParamSeti 2000 default stub }
    cuParamSetv { cuParamSetv 2000 default stub }
    cuPointerGetAttribute { cuPointerGetAttribute 4000 default implemented }
    cuPointerGetAttributes { cuPointerGetAttributes 7000 default implemented }
    cuPointerSetAttribute { cuPointerSetAttribute 6000 default stub }
    cuProfilerInitialize { cuProfilerInitialize 4000 default stub }
    cuProfilerStart { cuProfilerStart 4000 default stub }
    cuProfilerStop { cuProfilerStop 4000 default stub }
    cuSignalExternalSemaphoresAsync { cuSignalExternalSemaphoresAsync 10000 default stub, cuSignalExternalSemaphoresAsync_ptsz 10000 ptsz stub }
    cuStreamAddCallback { cuStreamAddCallback 5000 default implemented, cuStreamAddCallback_ptsz 7000 ptsz implemented }
    cuStreamAttachMemAsync { cuStreamAttachMemAsync 6000 default stub, cuStreamAttachMemAsync_ptsz 7000 ptsz stub }
    cuStreamBatchMemOp { cuStreamBatchMemOp 8000 default stub, cuStreamBatchMemOp_v2 11070 default stub, cuStreamBatchMemOp_ptsz 8000 ptsz stub, cuStreamBatchMemOp_v2_ptsz 11070 ptsz stub }
    cuStreamBeginCapture { cuStreamBeginCapture 10000 default stub, cuStreamBeginCapture_v2 10010 default stub, cuStreamBeginCapture_ptsz 10000 ptsz stub, cuStreamBeginCapture_v2_ptsz 10010 ptsz stub }
    cuStreamBeginCaptureToCig { cuStreamBeginCaptureToCig 13010 default stub, cuStreamBeginCaptureToCig_ptsz 13010 ptsz stub }
    cuStreamBeginCaptureToGraph { cuStreamBeginCaptureToGraph 12030 default stub, cuStreamBeginCaptureToGraph_ptsz 12030 ptsz stub }
    cuStreamBeginRecaptureToGraph { cuStreamBeginRecaptureToGraph 13030 default stub, cuStreamBeginRecaptureToGraph_ptsz 13030 ptsz stub }
    cuStreamCopyAttributes { cuStreamCopyAttributes 11000 default stub, cuStreamCopyAttributes_ptsz 11000 ptsz stub }
    cuStreamCreate { cuStreamCreate 2000 default implemented }
    cuStreamCreateWithPriority { cuStreamCreateWithPriority 5050 default implemented }
    cuStreamDestroy { cuStreamDestroy 2000 default implemented, cuStreamDestroy_v2 4000 default implemented }
    cuStreamEndCapture { cuStreamEndCapture 10000 default stub, cuStreamEndCapture_ptsz 10000 ptsz stub }
    cuStreamEndCaptureToCig { cuStreamEndCaptureToCig 13010 default stub, cuStreamEndCaptureToCig_ptsz 13010 ptsz stub }
    cuStreamGetAttribute { cuStreamGetAttribute 11000 default stub, cuStreamGetAttribute_ptsz 11000 ptsz stub }
    cuStreamGetCaptureInfo { cuStreamGetCaptureInfo 10010 default stub, cuStreamGetCaptureInfo_v2 11030 default stub, cuStreamGetCaptureInfo_v3 12030 default stub, cuStreamGetCaptureInfo_ptsz 10010 ptsz stub, cuStreamGetCaptureInfo_v2_ptsz 11030 ptsz stub, cuStreamGetCaptureInfo_v3_ptsz 12030 ptsz stub }
    cuStreamGetCtx { cuStreamGetCtx 9020 default implemented, cuStreamGetCtx_v2 12050 default implemented, cuStreamGetCtx_ptsz 9020 ptsz implemented, cuStreamGetCtx_v2_ptsz 12050 ptsz implemented }
    cuStreamGetDevResource { cuStreamGetDevResource 13010 default stub, cuStreamGetDevResource_ptsz 13010 ptsz stub }
    cuStreamGetDevice { cuStreamGetDevice 12080 default implemented, cuStreamGetDevice_ptsz 12080 ptsz implemented }
    cuStreamGetFlags { cuStreamGetFlags 5050 default implemented, cuStreamGetFlags_ptsz 7000 ptsz implemented }
    cuStreamGetGreenCtx { cuStreamGetGreenCtx 12040 default stub }
    cuStreamGetId { cuStreamGetId 12000 default implemented, cuStreamGetId_ptsz 12000 ptsz implemented }
    cuStreamGetPriority { cuStreamGetPriority 5050 default implemented, cuStreamGetPriority_ptsz 7000 ptsz implemented }
    cuStreamIsCapturing { cuStreamIsCapturing 10000 default implemented, cuStreamIsCapturing_ptsz 10000 ptsz implemented }
    cuStreamQuery { cuStreamQuery 2000 default implemented, cuStreamQuery_ptsz 7000 ptsz implemented }
    cuStreamSetAttribute { cuStreamSetAttribute 11000 default stub, cuStreamSetAttribute_ptsz 11000 ptsz stub }
    cuStreamSynchronize { cuStreamSynchronize 2000 default implemented, cuStreamSynchronize_ptsz 7000 ptsz implemented }
    cuStreamUpdateCaptureDependencies { cuStreamUpdateCaptureDependencies 11030 default stub, cuStreamUpdateCaptureDependencies_v2 12030 default stub, cuStreamUpdateCaptureDependencies_ptsz 11030 ptsz stub, cuStreamUpdateCaptureDependencies_v2_ptsz 12030 ptsz stub }
    cuStreamWaitEvent { cuStreamWaitEvent 3020 default implemented, cuStreamWaitEvent_ptsz 7000 ptsz implemented }
    cuStreamWaitValue32 { cuStreamWaitValue32 8000 default stub, cuStreamWaitValue32_v2 11070 default stub, cuStreamWaitValue32_ptsz 8000 ptsz stub, cuStreamWaitValue32_v2_ptsz 11070 ptsz stub }
    cuStreamWaitValue64 { cuStreamWaitValue64 9000 default stub, cuStreamWaitValue64_v2 11070 default stub, cuStreamWaitValue64_ptsz 9000 ptsz stub, cuStreamWaitValue64_v2_ptsz 11070 ptsz stub }
    cuStreamWriteValue32 { cuStreamWriteValue32 8000 default stub, cuStreamWriteValue32_v2 11070 default stub, cuStreamWriteValue32_ptsz 8000 ptsz stub, cuStreamWriteValue32_v2_ptsz 11070 ptsz stub }
    cuStreamWriteValue64 { cuStreamWriteValue64 9000 default stub, cuStreamWriteValue64_v2 11070 default stub, cuStreamWriteValue64_ptsz 9000 ptsz stub, cuStreamWriteValue64_v2_ptsz 11070 ptsz stub }
    cuSurfObjectCreate { cuSurfObjectCreate 5000 default stub }
    cuSurfObjectDestroy { cuSurfObjectDestroy 5000 default stub }
    cuSurfObjectGetResourceDesc { cuSurfObjectGetResourceDesc 5000 default stub }
    cuSurfRefGetArray { cuSurfRefGetArray 3000 default stub }
    cuSurfRefSetArray { cuSurfRefSetArray 3000 default stub }
    cuTensorMapEncodeIm2col { cuTensorMapEncodeIm2col 12000 default stub }
    cuTensorMapEncodeIm2colWide { cuTensorMapEncodeIm2colWide 12080 default stub }
    cuTensorMapEncodeTiled { cuTensorMapEncodeTiled 12000 default stub }
    cuTensorMapReplaceAddress { cuTensorMapReplaceAddress 12000 default stub }
    cuTensorMapSetAllocationClass { cuTensorMapSetAllocationClass 13050 default stub }
    cuTexObjectCreate { cuTexObjectCreate 5000 default stub }
    cuTexObjectDestroy { cuTexObjectDestroy 5000 default stub }
    cuTexObjectGetResourceDesc { cuTexObjectGetResourceDesc 5000 default stub }
    cuTexObjectGetResourceViewDesc { cuTexObjectGetResourceViewDesc 5000 default stub }
    cuTexObjectGetTextureDesc { cuTexObjectGetTextureDesc 5000 default stub }
    cuTexRefCreate { cuTexRefCreate 2000 default stub }
    cuTexRefDestroy { cuTexRefDestroy 2000 default stub }
    cuTexRefGetAddress { cuTexRefGetAddress 2000 default stub, cuTexRefGetAddress_v2 3020 default stub }
    cuTexRefGetAddressMode { cuTexRefGetAddressMode 2000 default stub }
    cuTexRefGetArray { cuTexRefGetArray 2000 default stub }
    cuTexRefGetBorderColor { cuTexRefGetBorderColor 8000 default stub }
    cuTexRefGetFilterMode { cuTexRefGetFilterMode 2000 default stub }
    cuTexRefGetFlags { cuTexRefGetFlags 2000 default stub }
    cuTexRefGetFormat { cuTexRefGetFormat 2000 default stub }
    cuTexRefGetMaxAnisotropy { cuTexRefGetMaxAnisotropy 5000 default stub }
    cuTexRefGetMipmapFilterMode { cuTexRefGetMipmapFilterMode 5000 default stub }
    cuTexRefGetMipmapLevelBias { cuTexRefGetMipmapLevelBias 5000 default stub }
    cuTexRefGetMipmapLevelClamp { cuTexRefGetMipmapLevelClamp 5000 default stub }
    cuTexRefGetMipmappedArray { cuTexRefGetMipmappedArray 5000 default stub }
    cuTexRefSetAddress { cuTexRefSetAddress 2000 default stub, cuTexRefSetAddress_v2 3020 default stub }
    cuTexRefSetAddress2D { cuTexRefSetAddress2D 2020 default stub, cuTexRefSetAddress2D_v2 3020 default stub, cuTexRefSetAddress2D_v3 4010 default stub }
    cuTexRefSetAddressMode { cuTexRefSetAddressMode 2000 default stub }
    cuTexRefSetArray { cuTexRefSetArray 2000 default stub }
    cuTexRefSetBorderColor { cuTexRefSetBorderColor 8000 default stub }
    cuTexRefSetFilterMode { cuTexRefSetFilterMode 2000 default stub }
    cuTexRefSetFlags { cuTexRefSetFlags 2000 default stub }
    cuTexRefSetFormat { cuTexRefSetFormat 2000 default stub }
    cuTexRefSetMaxAnisotropy { cuTexRefSetMaxAnisotropy 5000 default stub }
    cuTexRefSetMipmapFilterMode { cuTexRefSetMipmapFilterMode 5000 default stub }
    cuTexRefSetMipmapLevelBias { cuTexRefSetMipmapLevelBias 5000 default stub }
    cuTexRefSetMipmapLevelClamp { cuTexRefSetMipmapLevelClamp 5000 default stub }
    cuTexRefSetMipmappedArray { cuTexRefSetMipmappedArray 5000 default stub }
    cuThreadExchangeStreamCaptureMode { cuThreadExchangeStreamCaptureMode 10010 default stub }
    cuUserObjectCreate { cuUserObjectCreate 11030 default stub }
    cuUserObjectRelease { cuUserObjectRelease 11030 default stub }
    cuUserObjectRetain { cuUserObjectRetain 11030 default stub }
    cuVDPAUCtxCreate { cuVDPAUCtxCreate 3010 default stub, cuVDPAUCtxCreate_v2 3020 default stub }
    cuVDPAUGetDevice { cuVDPAUGetDevice 3010 default stub }
    cuWaitExternalSemaphoresAsync { cuWaitExternalSemaphoresAsync 10000 default stub, cuWaitExternalSemaphoresAsync_ptsz 10000 ptsz stub }
}
