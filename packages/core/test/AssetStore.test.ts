import * as Layer from "effect/Layer"
import * as AssetStore from "../src/AssetStore.js"
import { assetStoreContract } from "../src/testing/AssetStoreContract.js"
import * as Transaction from "../src/Transaction.js"

assetStoreContract("layerMemory", AssetStore.layerMemory.pipe(Layer.provide(Transaction.layerMemory)))
